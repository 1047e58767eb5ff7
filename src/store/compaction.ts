import { join } from 'node:path';
import { createForAppend, unlinkIfPresent } from '../fs/durable-fs.ts';
import { journalName } from './journal.ts';
import { SNAPSHOT_CHUNK_BOOKS, SnapshotAborted, writeSnapshot, type SnapshotHeader } from './snapshot.ts';
import type { StoreState } from './state.ts';

/**
 * When the journal is folded into a new snapshot (StoreOptions.compaction; each field optional
 * there, defaults in COMPACTION_DEFAULTS): journal size against the snapshot's, and chunk size.
 */
export interface CompactionOptions {
  /** The journal may always grow to this size: tiny catalogues do not compact on every write. */
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

export const COMPACTION_DEFAULTS: CompactionOptions = { minBytes: 256 * 1024, ratio: 0.25, chunkBooks: SNAPSHOT_CHUNK_BOOKS };

interface Hooks {
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
 * copy-on-write layer on the hot write path; the fuzzy snapshot costs neither.
 */
export class Compactor {
  completed = 0;
  readonly #s: StoreState;
  readonly #options: CompactionOptions;
  readonly #hooks: Hooks;
  #running: Promise<void> | undefined;
  #requests: Request[] = [];
  /** After a failure, wait for this much journal before trying again. */
  #retryAtBytes = 0;

  constructor(state: StoreState, options: CompactionOptions, hooks: Hooks) {
    this.#s = state;
    this.#options = options;
    this.#hooks = hooks;
  }

  request(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#requests.push({ resolve, reject });
      this.#hooks.kick();
    });
  }

  /** Fails every compaction asked for but not started (the store closed or stopped writing). */
  cancel(err: Error): void {
    const requests = this.#requests;
    this.#requests = [];
    for (const r of requests) r.reject(err);
  }

  idle(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  #due(): boolean {
    const { journal, snapshotBytes } = this.#s;
    const limit = Math.max(this.#options.minBytes, this.#options.ratio * snapshotBytes);
    return journal.bytes > limit && journal.bytes >= this.#retryAtBytes;
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
    let header: SnapshotHeader;
    try {
      header = await this.#rotate();
    } catch (err) {
      this.#failed(err, requests);
      return;
    }
    // Never rejects: #failed settles the requests before it logs, so a throwing logger loses nothing.
    this.#running = this.#snapshot(header)
      .then(
        () => {
          requests.forEach((r) => r.resolve());
          this.#s.observer.compacted((performance.now() - start) / 1000);
        },
        (err: unknown) => this.#failed(err, requests),
      )
      .catch(() => {})
      .finally(() => {
        this.#running = undefined;
        if (this.#requests.length > 0 && !this.#hooks.closed()) this.#hooks.kick();
      });
  }

  /** Starts journal S+1 (made durable in its directory) and retires the current one. */
  async #rotate(): Promise<SnapshotHeader> {
    const s = this.#s;
    const header = { seq: s.seq, nextId: s.nextId };
    if (s.journal.firstSeq === s.seq + 1) return header;
    const name = journalName(s.seq + 1);
    const handle = await createForAppend(s.fs, join(s.dir, name));
    const old = s.journal;
    s.journal = { name, firstSeq: s.seq + 1, bytes: 0, handle };
    s.older.push({ name: old.name, firstSeq: old.firstSeq, bytes: old.bytes });
    await old.handle.close().catch((err: unknown) => s.logger.warn('closing a retired journal failed', { err: err as Error }));
    return header;
  }

  async #snapshot(header: SnapshotHeader): Promise<void> {
    const s = this.#s;
    const { bytes } = await writeSnapshot(s.fs, s.dir, header, s.index.values(), {
      chunkBooks: this.#options.chunkBooks,
      aborted: this.#hooks.closed,
    });
    s.snapshotBytes = bytes;
    const obsolete = s.older;
    s.older = [];
    for (const j of obsolete) {
      await unlinkIfPresent(s.fs, join(s.dir, j.name)).catch((err: unknown) => {
        // Recovery skips a journal the snapshot covers, so one left behind costs only space.
        s.logger.warn('could not delete a compacted journal', { err: err as Error, file: j.name });
      });
    }
    if (obsolete.length > 0) await s.fs.syncDir(s.dir);
    this.completed++;
    s.feed.snapshotTaken(header.seq);
    s.logger.debug('compacted the journal into a snapshot', { seq: header.seq, books: s.index.size, snapshotBytes: bytes });
  }

  #failed(err: unknown, requests: Request[]): void {
    this.#retryAtBytes = this.#s.journal.bytes + this.#options.minBytes;
    for (const r of requests) r.reject(err);
    if (!(err instanceof SnapshotAborted)) {
      this.#s.logger.error('compaction failed; the journal still holds every change', { err: err as Error });
    }
  }
}
