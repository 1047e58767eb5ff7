import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { bookJson, type Book } from '../model/book.ts';
import { MAX_BOOK_ID } from '../model/valid-book.ts';
import { StoreCorruptError, StoreFormatError } from '../faults.ts';
import { readDataFile } from '../fs/data-file.ts';
import { isNotFound, writeAtomic, type FileLayer } from '../fs/durable-fs.ts';
import { pageOf, type BookIndex } from './book-index.ts';
import type { ChangeEntry } from './change.ts';
import { bookIdAt } from './decimal.ts';
import { changeLine, parseChangeLines } from './snapshot-changes.ts';

/**
 * The snapshot is one JSON document a person (or `jq`) can read, laid out one book per line, then
 * one retained change per line (snapshot-changes.ts):
 *
 *     {"format":"book-catalogue-snapshot","version":2,"seq":S,"nextId":N,"books":[
 *     {"id":1,"title":"…","author":"…","year":1999},
 *     {"id":2,"title":"…","author":"…","year":2001}
 *     ],"changes":[
 *     {"seq":S-1,"type":"created","id":2,"book":{"id":2,"title":"…","author":"…","year":2001}},
 *     {"seq":S,"type":"deleted","id":3,"book":null}
 *     ],"count":2,"crc":C}
 *
 * C is the CRC-32 of every byte before the final `\n],"count":`. Books are in ascending id order
 * and each line is exactly `bookJson(book)`, so loading needs no JSON.parse per book: the lines
 * of one index page become that page's packed text (book-index.ts). Version 1, which the release
 * before this one wrote, is the same without `"changes"`; it is still read.
 */
export const SNAPSHOT_FILE = 'snapshot.json';
const FORMAT = 'book-catalogue-snapshot';
const SNAPSHOT_VERSION = 2;
const TRAILER_MARK = '\n],"count":';
const CHANGES_MARK = '\n],"changes":[';
/** ~150 KB per write at typical book sizes: each chunk costs well under a millisecond to build. */
export const SNAPSHOT_CHUNK_BOOKS = 2000;

export interface SnapshotHeader {
  /** Every journal record up to this sequence number is reflected in the books. */
  seq: number;
  nextId: number;
}

export interface SnapshotWriteOptions {
  /** The last changes up to `header.seq`, contiguous and ascending (the change feed's, at most RETAINED_CHANGES). */
  changes?: readonly ChangeEntry[];
  chunkBooks?: number;
  /** Checked between chunks; returning true abandons the write (the temp file is removed). */
  aborted?: () => boolean;
}

export class SnapshotAborted extends Error {}

/**
 * Writes the snapshot atomically, serializing `books` a chunk at a time; returns its size in bytes.
 * `header.nextId` may be lower than the last book's id + 1: readSnapshot raises it to that.
 */
export async function writeSnapshot(
  fs: FileLayer,
  dir: string,
  header: SnapshotHeader,
  books: Iterator<string> | AsyncIterator<string>,
  options: SnapshotWriteOptions = {},
): Promise<{ bytes: number }> {
  const chunkBooks = options.chunkBooks ?? SNAPSHOT_CHUNK_BOOKS;
  const changes = options.changes ?? [];
  // readSnapshot refuses changes that do not end at the header's seq: refuse to write them instead.
  if (changes.some((c, i) => c.seq !== header.seq - (changes.length - 1 - i))) {
    throw new Error(`the changes for a snapshot at seq ${header.seq} must be contiguous and end at it`);
  }
  let bytes = 0;
  let count = 0;
  await writeAtomic(fs, join(dir, SNAPSHOT_FILE), async (write) => {
    let crc = 0;
    const emit = async (text: string): Promise<void> => {
      const buf = Buffer.from(text, 'utf8');
      crc = crc32(buf, crc);
      bytes += buf.length;
      await write(buf);
    };
    await emit(`{"format":"${FORMAT}","version":${SNAPSHOT_VERSION},"seq":${header.seq},"nextId":${header.nextId},"books":[`);
    for (let done = false; !done; ) {
      if (options.aborted?.() === true) throw new SnapshotAborted('snapshot abandoned');
      let text = '';
      for (let i = 0; i < chunkBooks; i++) {
        // An import hands its books as they are read; only such an iterator is awaited per book.
        const step = books.next();
        const next = step instanceof Promise ? await step : step;
        if (next.done === true) {
          done = true;
          break;
        }
        text += count++ === 0 ? `\n${next.value}` : `,\n${next.value}`;
      }
      // Awaiting the write is the yield: other requests run while the chunk is on its way.
      if (text !== '') await emit(text);
    }
    await emit(CHANGES_MARK);
    for (let from = 0; from < changes.length; from += chunkBooks) {
      if (options.aborted?.() === true) throw new SnapshotAborted('snapshot abandoned');
      const lines = changes.slice(from, from + chunkBooks).map(changeLine);
      await emit(`${from === 0 ? '\n' : ',\n'}${lines.join(',\n')}`);
    }
    const trailer = Buffer.from(`${TRAILER_MARK}${count},"crc":${crc}}\n`, 'utf8');
    bytes += trailer.length;
    await write(trailer);
  });
  return { bytes };
}

export interface LoadedSnapshot extends SnapshotHeader {
  bytes: number;
  /** The changes it carries, ending at `seq` (none in a version 1 snapshot). */
  changes: ChangeEntry[];
  /**
   * The first id a replayed put creates. A compaction's snapshot (seq > 0) says so in its header;
   * the release before this one wrote books created after `seq` into it too, so the books' own ids
   * cannot say. A restore's snapshot (seq 0, catalogue-file.ts) is followed only by new books.
   */
  newIdsFrom: number;
}

function corrupt(path: string, offset: number, detail: string): StoreCorruptError {
  return new StoreCorruptError(path, offset, detail);
}

/**
 * Reads the snapshot into `index`, one page of lines at a time (lines are in ascending id order,
 * so a page's lines are contiguous); undefined when there is none. `nextId` covers every book.
 */
export async function readSnapshot(fs: FileLayer, dir: string, index: BookIndex): Promise<LoadedSnapshot | undefined> {
  const path = join(dir, SNAPSHOT_FILE);
  let buf: Buffer;
  try {
    buf = await readDataFile(fs, path);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const headerEnd = buf.indexOf(10);
  const header = parseHeader(buf.toString('utf8', 0, headerEnd === -1 ? buf.length : headerEnd));
  if (header === undefined) throw corrupt(path, 0, 'the header does not parse');
  if (header.version > SNAPSHOT_VERSION) {
    throw new StoreFormatError(path, `the snapshot is in format version ${header.version}; this release reads versions 1 and ${SNAPSHOT_VERSION}`);
  }
  const trailerStart = buf.lastIndexOf(TRAILER_MARK);
  const trailer = trailerStart < headerEnd ? undefined : parseTrailer(buf.toString('utf8', trailerStart + 3));
  if (trailer === undefined) throw corrupt(path, Math.max(trailerStart, headerEnd, 0), 'the trailer is missing or does not parse');
  // Raw newlines end lines only (JSON escapes them inside strings), so the last mark is the one.
  const changesStart = header.version === 1 ? trailerStart : buf.lastIndexOf(CHANGES_MARK, trailerStart);
  const booksEnd = changesStart < headerEnd ? trailerStart : changesStart;
  if (crc32(buf.subarray(0, trailerStart)) !== trailer.crc) {
    const changesFrom = booksEnd < trailerStart ? booksEnd + CHANGES_MARK.length : trailerStart;
    throw corrupt(path, locateDamage(buf, headerEnd + 1, booksEnd, changesFrom, trailerStart, header.seq), 'the checksum does not match: the content was altered');
  }
  if (changesStart < headerEnd) throw corrupt(path, headerEnd, 'the changes are missing');
  let changes: ChangeEntry[] = [];
  if (header.version !== 1) {
    const parsed = parseChangeLines(buf, changesStart + CHANGES_MARK.length, trailerStart, header.seq);
    if (!Array.isArray(parsed)) throw corrupt(path, parsed.badAt, 'a change line is not a change in ascending seq order ending at the snapshot\'s');
    changes = parsed;
  }
  let count = 0;
  let lastId = 0;
  let pageStart = headerEnd + 1;
  for (let start = pageStart; start < booksEnd; count++) {
    let end = buf.indexOf(10, start);
    if (end === -1 || end > booksEnd) end = booksEnd;
    const id = bookIdAt(buf, start);
    if (id === undefined || id <= lastId) throw corrupt(path, start, 'a book line is not a book in ascending id order');
    if (start > pageStart && pageOf(id) !== pageOf(lastId)) {
      index.addPacked(buf.toString('utf8', pageStart, start), start - pageStart);
      pageStart = start;
    }
    lastId = id;
    start = end + 1;
  }
  // The last line's newline is the first byte of the mark after the books.
  if (booksEnd > pageStart) index.addPacked(buf.toString('utf8', pageStart, booksEnd + 1), booksEnd + 1 - pageStart);
  if (count !== trailer.count) throw corrupt(path, trailerStart, `the trailer counts ${trailer.count} books, the file holds ${count}`);
  const nextId = Math.max(header.nextId, lastId + 1);
  return { seq: header.seq, nextId, bytes: buf.length, changes, newIdsFrom: header.seq > 0 ? header.nextId : nextId };
}

/** The header as far as its version: the rest of a later version's header may differ. */
function parseHeader(line: string): (SnapshotHeader & { version: number }) | undefined {
  const version = Number(/^\{"format":"book-catalogue-snapshot","version":(\d{1,9})[,}]/.exec(line)?.[1]);
  if (!(version >= 1)) return undefined;
  if (version > SNAPSHOT_VERSION) return { version, seq: 0, nextId: 0 };
  try {
    const h = JSON.parse(`${line}]}`) as Record<string, unknown>;
    // nextId is MAX_BOOK_ID + 1 once every id was given: exact as a double, and never a book's id.
    const nextId = h.nextId as number;
    if (h.format !== FORMAT || !Number.isSafeInteger(h.seq) || !Number.isInteger(nextId) || nextId < 1 || nextId > MAX_BOOK_ID + 1) return undefined;
    return { version, seq: h.seq as number, nextId };
  } catch {
    return undefined;
  }
}

function parseTrailer(text: string): { count: number; crc: number } | undefined {
  try {
    const t = JSON.parse(`{${text}`) as Record<string, unknown>;
    if (!Number.isSafeInteger(t.count) || !Number.isSafeInteger(t.crc)) return undefined;
    return { count: t.count as number, crc: t.crc as number };
  } catch {
    return undefined;
  }
}

/**
 * The checksum failed: name the first line that is not a well-formed book in [from, to), else the
 * first change line in [changesFrom, changesTo) that is not a change of a well-formed book, else
 * the books' start.
 */
function locateDamage(buf: Buffer, from: number, to: number, changesFrom: number, changesTo: number, seq: number): number {
  for (let start = from; start < to; ) {
    let end = buf.indexOf(10, start);
    if (end === -1 || end > to) end = to;
    const text = buf.toString('utf8', start, buf[end - 1] === 44 ? end - 1 : end);
    if (parseBook(text) === undefined) return start;
    start = end + 1;
  }
  const changes = parseChangeLines(buf, changesFrom, changesTo, seq, (json) => parseBook(json) !== undefined);
  return Array.isArray(changes) ? from : changes.badAt;
}

/** The shape a stored book line has; whether it is valid was settled before it was written. */
function asStoredBook(value: unknown): Book | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const b = value as Record<string, unknown>;
  if (!Number.isSafeInteger(b.id) || (b.id as number) < 1) return undefined;
  if (typeof b.title !== 'string' || typeof b.author !== 'string' || !Number.isInteger(b.year)) return undefined;
  return { id: b.id as number, title: b.title, author: b.author, year: b.year as number };
}

/** Parses one stored book line; undefined unless it is exactly what `bookJson` would write. */
function parseBook(json: string): Book | undefined {
  try {
    const book = asStoredBook(JSON.parse(json));
    return book !== undefined && bookJson(book) === json ? book : undefined;
  } catch {
    return undefined;
  }
}
