import { crc32 } from 'node:zlib';
import type { ChangeEntry } from './change.ts';
import { bookIdAt, bookIdIn, decimalAt } from './decimal.ts';

/**
 * The journal: JSON lines, one change each, `{"seq":N,"op":"put","book":{…},"crc":C}` or
 * `{"seq":N,"op":"del","id":I,"crc":C}`, where C is the CRC-32 of the line's text before
 * `,"crc":`. A put carries the book's full state, so replaying a record twice is harmless.
 * Files are named after the first sequence number they hold, zero-padded so `ls` lists them in
 * replay order.
 *
 * Each file starts with a header line, `{"format":"book-catalogue-journal","version":1}`, so that a
 * later release can read what this one wrote and this one refuses what a later one wrote (the files
 * on disk do not change when the API's JSON does: docs/storage.md, "File formats"). A line in the file, not
 * the file's name: the name already says where the file sits in replay order, the marker travels
 * with the bytes through a copy or a restore, and `head -1` shows it. A file without the header was
 * written before it existed and holds version 1 records. The header is written and fdatasynced
 * before the file receives a record, so a crash can tear only the header of a file with no record:
 * recovery handles that like any torn final record.
 */
export const JOURNAL_FORMAT = 'book-catalogue-journal';
export const JOURNAL_VERSION = 1;
/** Later versions keep this prefix, so that any release can tell which version a file is in. */
const HEADER_PREFIX = `{"format":"${JOURNAL_FORMAT}","version":`;
export const JOURNAL_HEADER = Buffer.from(`${HEADER_PREFIX}${JOURNAL_VERSION}}\n`, 'latin1');
const CRC_MARK = ',"crc":';
const SEQ_PREFIX = '{"seq":';
const PUT_INFIX = '"op":"put","book":';
const DEL_INFIX = '"op":"del","id":';
const NAME = /^journal-(\d{16})\.jsonl$/;

/** A journal file as the store tracks it. */
export interface JournalFile {
  name: string;
  firstSeq: number;
  /** Bytes of the header and whole, durable records. */
  bytes: number;
}

/** A journal file as recovery found it. */
export interface RecoveredJournal extends JournalFile {
  /** Its last record's sequence number (firstSeq - 1 when it has none). */
  lastSeq: number;
  /** Whether it starts with the header (scanJournal). */
  marked: boolean;
}

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

/** The journal records of `entries`, in their order. */
export function journalText(entries: readonly ChangeEntry[]): string {
  let text = '';
  for (const e of entries) text += e.bookJson === null ? encodeDelete(e.seq, e.id) : encodePut(e.seq, e.bookJson);
  return text;
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
    const id = bookIdIn(buf, comma + 1 + DEL_INFIX_B.length, mark);
    return id === undefined ? undefined : { seq, op: 'del', id };
  }
  return undefined;
}

export interface ScanResult {
  /** Sequence number of the last good record (firstSeq - 1 when none). */
  lastSeq: number;
  /**
   * Bytes of the header and whole good records; anything after is a torn tail, the one byte that
   * stands where an unterminated last record's newline belongs, or nothing.
   */
  goodLength: number;
  /** Whether the last good record lacks its newline (missing, or one damaged byte in its place). */
  unterminated: boolean;
  /** Whether the file starts with the header (false: written before headers existed, or empty). */
  marked: boolean;
}

export class JournalDamage extends Error {
  readonly offset: number;
  constructor(offset: number, detail: string) {
    super(detail);
    this.offset = offset;
  }
}

/** A journal whose header names a version this release cannot read: written by a later one. */
export class JournalVersionUnknown extends Error {
  readonly version: string;
  constructor(version: string) {
    super(`the journal is in format version ${version}; this release reads version ${JOURNAL_VERSION}`);
    this.version = version;
  }
}

/**
 * The header line buf[0, end) → the offset records start at; throws when it is a header this
 * release cannot read. undefined when the first line is not a header (a file from before them).
 */
function headerLength(buf: Buffer, end: number): number | undefined {
  if (!startsWith(buf, 0, latin1('{"format":'))) return undefined;
  const version = /^\d{1,9}(?=[,}])/.exec(buf.toString('latin1', HEADER_PREFIX.length, end));
  if (!startsWith(buf, 0, latin1(HEADER_PREFIX)) || version === null) throw new JournalDamage(0, 'the header does not parse');
  if (Number(version[0]) !== JOURNAL_VERSION) throw new JournalVersionUnknown(version[0]);
  if (end + 1 !== JOURNAL_HEADER.length || !startsWith(buf, 0, JOURNAL_HEADER)) throw new JournalDamage(0, 'the header does not parse');
  return end + 1;
}

/** True when the file holds no record: empty, or a header (whole or torn) and nothing after it. */
export function holdsNoRecord(bytes: Buffer): boolean {
  return bytes.length <= JOURNAL_HEADER.length && JOURNAL_HEADER.subarray(0, bytes.length).equals(bytes);
}

/**
 * The final line buf[start, end) has no newline: the record it holds when it is one whole, either
 * filling the line or followed by one byte where its newline belongs (a damaged newline). undefined
 * when it holds none: a torn tail.
 */
function unterminatedRecord(buf: Buffer, start: number, end: number): { record: JournalRecord; end: number } | undefined {
  for (const recordEnd of [end, end - 1]) {
    const record = recordEnd > start ? parseRecord(buf, start, recordEnd) : undefined;
    if (record !== undefined) return { record, end: recordEnd };
  }
  return undefined;
}

/**
 * Walks a journal file's bytes. A final line without its newline that holds a whole record (it
 * parses and passes its checksum, with or without one damaged byte where its newline belongs) was
 * written whole and is kept: `unterminated` tells recovery to write its newline. One that does not
 * is a torn tail (a crash mid-append: the newline is the last byte written, and zeros a power loss
 * leaves hold none), never acknowledged: the scan stops there. Anything else that is wrong, a
 * complete final line failing its checksum included, throws JournalDamage with the byte offset: a
 * complete line was written whole, so a bad one is damage, and dropping it could silently lose an
 * acknowledged change.
 */
export function scanJournal(bytes: Buffer, firstSeq: number, apply: (r: JournalRecord) => void): ScanResult {
  const firstEnd = bytes.indexOf(10);
  // A header without its newline is torn like a record: the loop below stops at it.
  const header = firstEnd === -1 ? undefined : headerLength(bytes, firstEnd);
  const marked = header !== undefined;
  let offset = header ?? 0;
  let expected = firstSeq;
  const check = (record: JournalRecord | undefined, at: number): JournalRecord => {
    if (record === undefined) throw new JournalDamage(at, 'record does not parse or fails its checksum');
    if (record.seq !== expected) throw new JournalDamage(at, `sequence number ${record.seq} where ${expected} was expected`);
    return record;
  };
  while (offset < bytes.length) {
    const end = bytes.indexOf(10, offset);
    if (end === -1) {
      const whole = unterminatedRecord(bytes, offset, bytes.length);
      // A torn record was never acknowledged (the ack waits for the whole write and its fdatasync).
      if (whole === undefined) return { lastSeq: expected - 1, goodLength: offset, unterminated: false, marked };
      apply(check(whole.record, offset));
      return { lastSeq: expected, goodLength: whole.end, unterminated: true, marked };
    }
    apply(check(parseRecord(bytes, offset, end), offset));
    expected++;
    offset = end + 1;
  }
  return { lastSeq: expected - 1, goodLength: offset, unterminated: false, marked };
}
