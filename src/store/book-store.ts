import type { Book, BookFields, BookPatch } from '../model/book.ts';
import type { ListSnapshot } from './book-index.ts';
import type { Change } from './change.ts';
import type { ChangeFeed } from './change-log.ts';

/**
 * A condition a conditional write puts on the book's current version, given as the book's JSON
 * (what `getJson` returns): HTTP builds one from If-Match (books/etag.ts); the store only asks it.
 */
export type VersionCondition = (currentJson: string) => boolean;

/** The books: reads come from memory; a write resolves only once it is durable on disk. */
export interface BookStore {
  readonly dir: string;
  readonly size: number;
  /**
   * Whether writes should be sent here now (GET /readyz): false once closed, while read-only until
   * a restart, after a failed write until the store has shown by itself that it can write
   * durably again, and while compaction keeps failing (the disk refuses new files: writes are
   * still taken, but the journal and the memory it costs only grow) until an attempt succeeds.
   */
  readonly writable: boolean;
  /** The book as response JSON (`id, title, author, year`), cached. */
  getJson(id: number): string | undefined;
  /**
   * A committed state as page texts, for streaming or scanning it; cached until the next change.
   * Pages changed since the last one are rebuilt a slice per event-loop turn first, so the state is
   * the one committed when that is done (each write wholly in or out).
   */
  listSnapshot(): Promise<ListSnapshot>;
  /** Up to `limit` books (JSON) with ids above `after`, ascending, and whether more follow. */
  booksAfter(after: number, limit: number): { books: string[]; more: boolean };
  create(fields: BookFields): Promise<Book>;
  /**
   * undefined when no book has that id (it may have been deleted while the body was read). With a
   * `condition`, rejects with PreconditionFailedError unless the book's current version meets it
   * when the write is decided, after every earlier write to it.
   */
  update(id: number, patch: BookPatch, condition?: VersionCondition): Promise<Book | undefined>;
  /** false when no book has that id; `condition` as for update. */
  remove(id: number, condition?: VersionCondition): Promise<boolean>;
  /** Every durable change in seq order, retained and live: GET /changes and GET /events read it. */
  readonly feed: ChangeFeed;
  /**
   * Resolves once memory holds every change acknowledged before the call, by this process or by
   * any other serving the same catalogue; undefined when memory already does (a store that is its
   * catalogue's only writer). Reads await it, so that a client behind a load balancer reads its own
   * writes whichever process answers (docs/scaling-out.md). It never rejects: when the catalogue
   * cannot be asked, reads answer what memory holds.
   */
  caughtUp(): Promise<void> | undefined;
  close(): Promise<void>;
}

/** `read()` once the store has caught up (BookStore.caughtUp): at once when it already has. */
export function whenCaughtUp<T>(store: Pick<BookStore, 'caughtUp'>, read: () => T | Promise<T>): T | Promise<T> {
  const waiting = store.caughtUp();
  return waiting === undefined ? read() : waiting.then(read);
}

/** Counters of the store's work since it opened: batches, fsyncs, compactions, file sizes. */
export interface StoreStats {
  /** Journal records written. */
  records: number;
  /** Group commits that reached disk: each is one write and one fdatasync. */
  batches: number;
  /** Journal fdatasyncs that succeeded: one per batch (a failed one is never retried, see #undoFailedWrite). */
  datasyncs: number;
  compactions: number;
  /** Changes waiting for the next batch (a flush is in flight). */
  queued: number;
  /** Last sequence number written. */
  seq: number;
  journalBytes: number;
  snapshotBytes: number;
}

/** What `openStore` returns: the BookStore the capabilities use plus what tests, benches and ops use. */
export interface DurableBookStore extends BookStore {
  readonly stats: Readonly<StoreStats>;
  /** Writes a snapshot now and starts a fresh journal; resolves when the snapshot is durable. */
  compact(): Promise<void>;
  /**
   * Up to `limit` (default 1000) durable changes after `since`, ascending seq. Throws
   * ChangesUnavailableError when `since` is older than the feed retains (`feed.oldest`) or newer
   * than its last change: reload the books, then follow from `feed.seq`. To follow live changes,
   * `feed.subscribe(listener)`; call both in the same turn to resume with no gap.
   */
  changes(since: number, limit?: number): Change[];
}

