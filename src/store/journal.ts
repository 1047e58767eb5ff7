import { crc32 } from 'node:zlib';
import { bookIdAt, decimalAt } from './decimal.ts';

/**
 * The journal: JSON lines, one change each, `{"seq":N,"op":"put","book":{…},"crc":C}` or
 * `{"seq":N,"op":"del","id":I,"crc":C}`, where C is the CRC-32 of the line's text before
 * `,"crc":`. A put carries the book's full state, so replaying a record twice is harmless.
 * Files are named after the first sequence number they hold, zero-padded so `ls` lists them in
 * replay order.
 */
const CRC_MARK = ',"crc":';
const SEQ_PREFIX = '{"seq":';
const PUT_INFIX = '"op":"put","book":';
const DEL_INFIX = '"op":"del","id":';
const NAME = /^journal-(\d{16})\.jsonl$/;

export type JournalRecord = { seq: number; op: 'put'; id: number; json: string } | { seq: number; op: 'del'; id: number };

export function journalName(firstSeq: number): string {
  return `journal-${String(firstSeq).padStart(16, '0')}.jsonl`;
}

/** The first sequence number a journal file holds, or undefined when the name is not a journal's. */
export function journalFirstSeq(name: string): number | undefined {
  const m = NAME.exec(name);
  return m === null ? undefined : Number(m[1]);
}

function seal(prefix: string): string {
  return `${prefix}${CRC_MARK}${crc32(prefix)}}\n`;
}

/** `json` is the book exactly as `bookJson` writes it. */
export function encodePut(seq: number, json: string): string {
  return seal(`${SEQ_PREFIX}${seq},${PUT_INFIX}${json}`);
}

export function encodeDelete(seq: number, id: number): string {
  return seal(`${SEQ_PREFIX}${seq},${DEL_INFIX}${id}`);
}

const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');
const CRC_MARK_B = latin1(CRC_MARK);
const SEQ_PREFIX_B = latin1(SEQ_PREFIX);
const PUT_INFIX_B = latin1(PUT_INFIX);
const DEL_INFIX_B = latin1(DEL_INFIX);

function startsWith(buf: Buffer, at: number, prefix: Buffer): boolean {
  return buf.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/**
 * The line buf[start, end) (newline excluded) → record, or undefined when it is torn or damaged.
 * Read from the bytes: the checksum first, then only our own encoder's layout, so replay needs
 * no JSON.parse and decodes nothing but a put's book (startup time with large journals).
 */
function parseRecord(buf: Buffer, start: number, end: number): JournalRecord | undefined {
  const mark = buf.lastIndexOf(CRC_MARK_B, end);
  if (mark < start || buf[end - 1] !== 125 || !startsWith(buf, start, SEQ_PREFIX_B)) return undefined;
  const crc = decimalAt(buf, mark + CRC_MARK_B.length, end - 1);
  if (crc === undefined || crc !== crc32(buf.subarray(start, mark))) return undefined;
  const comma = buf.indexOf(44, start + SEQ_PREFIX_B.length);
  const seq = decimalAt(buf, start + SEQ_PREFIX_B.length, comma);
  if (seq === undefined) return undefined;
  if (startsWith(buf, comma + 1, PUT_INFIX_B)) {
    const from = comma + 1 + PUT_INFIX_B.length;
    const id = buf[mark - 1] === 125 ? bookIdAt(buf, from) : undefined;
    return id === undefined ? undefined : { seq, op: 'put', id, json: buf.toString('utf8', from, mark) };
  }
  if (startsWith(buf, comma + 1, DEL_INFIX_B)) {
    const id = decimalAt(buf, comma + 1 + DEL_INFIX_B.length, mark);
    return id === undefined ? undefined : { seq, op: 'del', id };
  }
  return undefined;
}

export interface ScanResult {
  /** Sequence number of the last good record (firstSeq - 1 when none). */
  lastSeq: number;
  /** Bytes of whole good records; anything after is a torn tail (or nothing). */
  goodLength: number;
}

export class JournalDamage extends Error {
  readonly offset: number;
  constructor(offset: number, detail: string) {
    super(detail);
    this.offset = offset;
  }
}

/**
 * Walks a journal file's bytes. A final line without its newline is a torn tail (a crash
 * mid-append: the newline is the last byte written, and zeros a power loss leaves hold none): the
 * scan stops there. Anything else that is wrong, a complete final line failing its checksum
 * included, throws JournalDamage with the byte offset: a complete line was written whole, so a bad
 * one is damage, and dropping it could silently lose an acknowledged change.
 */
export function scanJournal(bytes: Buffer, firstSeq: number, apply: (r: JournalRecord) => void): ScanResult {
  let offset = 0;
  let expected = firstSeq;
  while (offset < bytes.length) {
    const end = bytes.indexOf(10, offset);
    // A record without its newline was never acknowledged (the ack waits for the whole write).
    if (end === -1) return { lastSeq: expected - 1, goodLength: offset };
    const record = parseRecord(bytes, offset, end);
    if (record === undefined) throw new JournalDamage(offset, 'record does not parse or fails its checksum');
    if (record.seq !== expected) throw new JournalDamage(offset, `sequence number ${record.seq} where ${expected} was expected`);
    apply(record);
    expected++;
    offset = end + 1;
  }
  return { lastSeq: expected - 1, goodLength: offset };
}
