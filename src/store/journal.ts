import { crc32 } from 'node:zlib';

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

function safeInt(text: string): number | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * One line (without its newline) → record, or undefined when it is torn or damaged. The checksum
 * is checked first; only our own encoder's layout is accepted after that, so no JSON.parse is
 * needed on the replay path (startup time with large journals).
 */
function parseRecord(line: string): JournalRecord | undefined {
  const mark = line.lastIndexOf(CRC_MARK);
  if (mark === -1 || !line.endsWith('}') || !line.startsWith(SEQ_PREFIX)) return undefined;
  const crc = safeInt(line.slice(mark + CRC_MARK.length, -1));
  if (crc === undefined || crc !== crc32(line.slice(0, mark))) return undefined;
  const comma = line.indexOf(',', SEQ_PREFIX.length);
  const seq = safeInt(line.slice(SEQ_PREFIX.length, comma));
  if (seq === undefined) return undefined;
  if (line.startsWith(PUT_INFIX, comma + 1)) {
    const json = line.slice(comma + 1 + PUT_INFIX.length, mark);
    const id = bookIdOf(json);
    return id === undefined ? undefined : { seq, op: 'put', id, json };
  }
  if (line.startsWith(DEL_INFIX, comma + 1)) {
    const id = safeInt(line.slice(comma + 1 + DEL_INFIX.length, mark));
    return id === undefined ? undefined : { seq, op: 'del', id };
  }
  return undefined;
}

const ID_PREFIX = '{"id":';

/** The id of a book in `bookJson` layout, read without parsing the whole object. */
function bookIdOf(json: string): number | undefined {
  if (!json.startsWith(ID_PREFIX) || !json.endsWith('}')) return undefined;
  return safeInt(json.slice(ID_PREFIX.length, json.indexOf(',', ID_PREFIX.length)));
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
 * Walks a journal file's bytes. A bad or unterminated final line is a torn tail
 * (a crash mid-append): the scan stops there. Anything else that is wrong throws JournalDamage
 * with the byte offset, because dropping it would silently lose acknowledged changes.
 */
export function scanJournal(bytes: Buffer, firstSeq: number, apply: (r: JournalRecord) => void): ScanResult {
  let offset = 0;
  let expected = firstSeq;
  while (offset < bytes.length) {
    const end = bytes.indexOf(10, offset);
    // A record without its newline was never acknowledged (the ack waits for the whole write).
    if (end === -1) return { lastSeq: expected - 1, goodLength: offset };
    const final = end === bytes.length - 1;
    const record = parseRecord(bytes.toString('utf8', offset, end));
    if (record === undefined) {
      if (final) return { lastSeq: expected - 1, goodLength: offset };
      throw new JournalDamage(offset, 'record does not parse or fails its checksum');
    }
    if (record.seq !== expected) throw new JournalDamage(offset, `sequence number ${record.seq} where ${expected} was expected`);
    apply(record);
    expected++;
    offset = end + 1;
  }
  return { lastSeq: expected - 1, goodLength: offset };
}
