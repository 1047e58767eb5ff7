import { BOOK_KEYS } from '../model/book.ts';
import { MAX_BOOK_ID } from '../model/valid-book.ts';
import type { ChangeEntry, ChangeType } from './change.ts';

/**
 * The changes a snapshot carries (format version 2): the last ones up to its `seq`, so that the
 * change feed's retention (docs/contract.md, "Change feed": the last RETAINED_CHANGES, fewer when the memory budget is spent) holds across a restart
 * even right after a compaction, when the journal holds nothing older. One line each,
 * `{"seq":N,"type":"created"|"updated"|"deleted","id":I,"book":<the book as stored, or null>}`.
 * The layout is the store's own, written here, not the API's change JSON: the files on disk do not
 * change when the API's JSON does (docs/storage.md, "File formats").
 */
export function changeLine(entry: ChangeEntry): string {
  return `{"seq":${entry.seq},"type":"${entry.type}","id":${entry.id},"book":${entry.bookJson ?? 'null'}}`;
}

const LINE = /^\{"seq":(\d{1,16}),"type":"(created|updated|deleted)","id":(\d{1,16}),"book":(.*)\}$/s;

/** A change line → entry; undefined when it is not one `changeLine` would write. */
function parseLine(text: string): ChangeEntry | undefined {
  const m = LINE.exec(text);
  if (m === null) return undefined;
  const type = m[2] as ChangeType;
  const book = m[4] as string;
  const deleted = type === 'deleted';
  const seq = Number(m[1]);
  const id = Number(m[3]);
  // Ids up to MAX_BOOK_ID, as the store gives them: a 16-digit id is a real one.
  if (!Number.isSafeInteger(seq) || id < 1 || id > MAX_BOOK_ID) return undefined;
  if (deleted !== (book === 'null') || (!deleted && !book.startsWith(`${BOOK_KEYS.id}${m[3]},`))) return undefined;
  return { seq, type, id, bookJson: deleted ? null : book };
}

/**
 * The change lines in buf[from, to) (each after a newline, all but the last ending in a comma),
 * which must be contiguous and end at `seq`. Returns them, or the offset of the first bad line.
 * `bookOk` checks each book's JSON too (only when locating damage: the checksum vouches for it).
 */
export function parseChangeLines(buf: Buffer, from: number, to: number, seq: number, bookOk?: (json: string) => boolean): ChangeEntry[] | { badAt: number } {
  const entries: ChangeEntry[] = [];
  for (let start = from; start < to; ) {
    if (buf[start] !== 10) return { badAt: start };
    let end = buf.indexOf(10, start + 1);
    if (end === -1 || end > to) end = to;
    const last = end === to;
    const text = buf.toString('utf8', start + 1, last ? end : end - 1);
    const entry = (last || buf[end - 1] === 44) ? parseLine(text) : undefined;
    const previous = entries.at(-1);
    const wellFormed = entry !== undefined && (entry.bookJson === null || bookOk?.(entry.bookJson) !== false);
    if (!wellFormed || (previous !== undefined && entry.seq !== previous.seq + 1)) return { badAt: start + 1 };
    entries.push(entry);
    start = end;
  }
  const lastSeq = entries.at(-1)?.seq;
  if (lastSeq !== undefined && lastSeq !== seq) return { badAt: from };
  return entries;
}
