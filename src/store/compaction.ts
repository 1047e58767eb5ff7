import type { Logger } from '../log.ts';
import type { FileLayer } from '../fs/durable-fs.ts';
import type { ChangeEntry } from './change.ts';
import type { JournalWriter } from './journal-writer.ts';
import type { StoreObserver } from './observer.ts';
import { CompactionFailures, type RetryPacing } from './compaction-failures.ts';
import { SNAPSHOT_CHUNK_BOOKS, SnapshotAborted, writeSnapshot, type SnapshotHeader } from './snapshot.ts';

/**
 * When the journal is folded into a new snapshot (StoreOptions.compaction; each field optional
 * there, defaults in COMPACTION_DEFAULTS): journal size against the snapshot's, chunk size, and
 * the pacing of attempts after a failure.
 */
export interface CompactionOptions extends RetryPacing {
  /**
   * The journal may always grow to this size, so that a small catalogue does not rewrite its
   * snapshot (which also carries the last RETAINED_CHANGES changes, ~1.5 MB) every few thousand
   * writes. 4 MiB is ~34k updates of 100 books, replayed in 40–60 ms at startup (~130 ms for a
   * 1,000-book catalogue's creates, `npm run bench:store`); against 256 KiB it took
   * compaction from ~2 µs to ~0.2 µs of each write's CPU (`node --import tsx bench/store-writes.ts`).
   */
  minBytes: number;
  /**
   * Beyond that, compaction starts once the journal is this many times the snapshot's size. 0.25
   * bounds what startup replays: at 1M books ≤ 22 MB of journal, ~0.3 s on top of the snapshot,
   * for one snapshot write (~0.4 s in the background) per ~150k changes.
   */
  ratio: number;
  /** Books serialized per snapshot write; the event loop runs between chunks. */
  chunkBooks: number;
}

/**
 * After a failure, the next attempt waits 1 s, then 2, 4, … up to a minute: each attempt may write a
 * whole snapshot, and a disk that refuses it for good must cost one attempt a minute, not one per
 * write. The journal keeps every change meanwhile, and readiness stays 503 for at most a minute
 * once the disk works again.
 */
export const COMPACTION_DEFAULTS: CompactionOptions = { minBytes: 4 * 1024 * 1024, ratio: 0.25, chunkBooks: SNAPSHOT_CHUNK_BOOKS, retryMs: 1000, maxRetryMs: 60_000 };

/** What compaction works with, and nothing else of the store. */
export interface CompactorParts {
  fs: FileLayer;
  dir: string;
  logger: Logger;
  observer: StoreObserver;
  journal: JournalWriter;
  /** The size of the snapshot the store opened with (0 when none). */
  snapshotBytes: number;
  /** The committed sequence number and next id; read with no write in flight. */
  position: () => SnapshotHeader;
  /** The live books' JSON in ascending id order, read a chunk at a time, and how many there are. */
  books: { values: () => Iterator<string>; readonly size: number };
  /** The last RETAINED_CHANGES changes, read with no write in flight: the snapshot carries them. */
  recentChanges: () => readonly ChangeEntry[];
  /** A snapshot holding every change up to `seq` is durable (the change feed may let go of them). */
  snapshotTaken: (seq: number) => void;
  closed: () => boolean;
  /** Runs the store's flush loop, which calls `maybeStart` between batches. */
  kick: () => void;
}

interface Request {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Journal + snapshot compaction. Between two batches (no write in flight) the flush loop lets
 * `maybeStart` switch appends to a fresh journal named after the next sequence number S+1; then,
 * while writes go on into that journal, the snapshot is serialized from the live index a chunk at
 * a time, renamed into place, and the older journals are deleted.
 *
 * The snapshot is fuzzy, not a point-in-time copy: chunks written later may already hold changes
 * made after S. Recovery replays every record after S over it, and replay is idempotent (a put
 * carries the full book, a delete removes), so the result is exact. We chose this over copying
 * the index at S because the copy is a synchronous pass over every book (tens of ms at 1M), or a
 * copy-on-write layer on the hot write path; the fuzzy snapshot costs neither. It may hold books
 * created after S: the header's `nextId` is what tells recovery a replayed creation from an update.
 */
export class Compactor {
  completed = 0;
  /** The size of the last durable snapshot. */
  snapshotBytes: number;
  readonly #p: CompactorParts;
  readonly #options: CompactionOptions;
  #running: Promise<void> | undefined;
  #requests: Request[] = [];
  readonly #failures: CompactionFailures;
  /** Set after a failure until the next attempt is due: none starts by itself before (one asked for with `request` does). */
  #retryTimer: NodeJS.Timeout | undefined;

  constructor(parts: CompactorParts, options: CompactionOptions) {
    this.#p = parts;
    this.#options = options;
    this.snapshotBytes = parts.snapshotBytes;
    this.#failures = new CompactionFailures(parts.logger, options);
  }

  /** True while compaction has failed NOT_READY_AFTER_FAILURES times in a row (GET /readyz says 503). */
  get failing(): boolean {
    return this.#failures.failing;
  }

  request(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#requests.push({ resolve, reject });
      this.#p.kick();
    });
  }

  /** Fails every compaction asked for but not started, and stops retrying (the store closed or stopped writing). */
  cancel(err: Error): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const requests = this.#requests;
    this.#requests = [];
    for (const r of requests) r.reject(err);
  }

  idle(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  #due(): boolean {
    const { bytes } = this.#p.journal;
    const limit = Math.max(this.#options.minBytes, this.#options.ratio * this.snapshotBytes);
    return bytes > limit && this.#retryTimer === undefined;
  }

  /** True when `maybeStart` would start a compaction: the flush loop then holds the next batch back. */
  wanted(): boolean {
    return this.#running === undefined && (this.#requests.length > 0 || this.#due());
  }

  /** Called by the flush loop only, with no write in flight. */
  async maybeStart(): Promise<void> {
    if (!this.wanted()) return;
    const requests = this.#requests;
    this.#requests = [];
    const start = performance.now();
    // Taken here, with no write in flight: the changes up to the snapshot's seq and no further.
    const header = this.#p.position();
    const changes = this.#p.recentChanges();
    try {
      await this.#p.journal.rotate(header.seq + 1);
    } catch (err) {
      this.#failed(err, requests);
      return;
    }
    // Never rejects: #failed settles the requests before it logs, so a throwing logger loses nothing.
    this.#running = this.#snapshot(header, changes)
      .then(
        () => {
          requests.forEach((r) => r.resolve());
          this.#p.observer.compacted((performance.now() - start) / 1000);
          this.#failures.succeeded();
        },
        (err: unknown) => this.#failed(err, requests),
      )
      .catch(() => {})
      .finally(() => {
        this.#running = undefined;
        if (this.#requests.length > 0 && !this.#p.closed()) this.#p.kick();
      });
  }

  async #snapshot(header: SnapshotHeader, changes: readonly ChangeEntry[]): Promise<void> {
    const p = this.#p;
    const { bytes } = await writeSnapshot(p.fs, p.dir, header, p.books.values(), {
      changes,
      chunkBooks: this.#options.chunkBooks,
      aborted: p.closed,
    });
    this.snapshotBytes = bytes;
    await p.journal.deleteRetired();
    this.completed++;
    p.snapshotTaken(header.seq);
    p.logger.debug('compacted the journal into a snapshot', { seq: header.seq, books: p.books.size, snapshotBytes: bytes });
  }

  /**
   * Counts and paces the failure: the next attempt waits for the timer, which then starts it by
   * itself, so that a store nobody writes to (a load balancer stops routing writes once /readyz
   * says 503) still finds out that its disk works again.
   */
  #failed(err: unknown, requests: Request[]): void {
    for (const r of requests) r.reject(err);
    if (err instanceof SnapshotAborted) return;
    this.#p.observer.compactionFailed();
    const delay = this.#failures.failed(err);
    // A failed attempt asked for during the backoff restarts it with the longer wait.
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    if (this.#p.closed()) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (!this.#p.closed()) this.#p.kick();
    }, delay);
    // A store waiting to retry must not keep the process alive by itself.
    this.#retryTimer.unref();
  }
}
