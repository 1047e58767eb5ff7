import type { Book } from '../model/book.ts';

/** What a change did to its book. */
export type ChangeType = 'created' | 'updated' | 'deleted';

/**
 * One durable change, as GET /changes and GET /events send it: `seq` is the journal's sequence
 * number (it only grows, across restarts and compactions), `book` the book after the change, or
 * null when it was deleted.
 */
export interface Change {
  readonly seq: number;
  readonly type: ChangeType;
  readonly id: number;
  readonly book: Book | null;
}

/**
 * A change as the feed keeps it: the book as its response JSON text (null when deleted), so a
 * change is turned into text once per answer or per fan-out, never parsed on the write path.
 */
export interface ChangeEntry {
  readonly seq: number;
  readonly type: ChangeType;
  readonly id: number;
  readonly bookJson: string | null;
}

/** `{"seq":…,"type":…,"id":…,"book":…}`, keys in that order. */
export function changeJson(entry: ChangeEntry): string {
  return `{"seq":${entry.seq},"type":"${entry.type}","id":${entry.id},"book":${entry.bookJson ?? 'null'}}`;
}

/** The entry as an object, for library users. */
export function changeOf(entry: ChangeEntry): Change {
  return { seq: entry.seq, type: entry.type, id: entry.id, book: entry.bookJson === null ? null : (JSON.parse(entry.bookJson) as Book) };
}
