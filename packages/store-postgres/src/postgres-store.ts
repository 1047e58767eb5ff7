import { changeOf, ChangesUnavailableError, StoreUnavailableError, type Book, type BookFields, type BookPatch, type Change, type ChangeFeed, type DurableBookStore, type ListSnapshot, type Logger, type StoreStats, type VersionCondition } from 'book-catalogue/store-kit';
import type { Pool } from 'pg';
import type { Follower } from './follower.ts';
import type { Mirror } from './mirror.ts';
import type { SeqBarrier } from './seq-barrier.ts';
import type { Writer } from './writer.ts';

/** How often a store whose last write failed tries a write of its own, to say it is ready again. */
const PROBE_INTERVAL_MS = 2000;

export interface StoreParts {
  /** What `dir` says in logs and /readyz's view: the URL without its password. */
  location: string;
  pool: Pool;
  mirror: Mirror;
  follower: Follower;
  writer: Writer;
  barrier: SeqBarrier;
  logger: Logger;
}

/**
 * The catalogue on PostgreSQL, as one process serves it: reads from memory (the mirror, kept in
 * seq order by the follower), writes through transactions that every process takes turns at, and
 * reads that wait (caughtUp) until memory holds what the database had committed when they arrived.
 */
export class PostgresBookStore implements DurableBookStore {
  readonly dir: string;
  readonly #p: StoreParts;
  #closing: Promise<void> | undefined;
  #lost: Error | undefined;
  #probe: NodeJS.Timeout | undefined;

  constructor(parts: StoreParts) {
    this.dir = parts.location;
    this.#p = parts;
  }

  get size(): number {
    return this.#p.mirror.index.size;
  }

  get feed(): ChangeFeed {
    return this.#p.mirror.feed;
  }

  get writable(): boolean {
    return this.#closing === undefined && this.#lost === undefined && this.#p.follower.listening && !this.#p.writer.failed && !this.#p.barrier.failing;
  }

  get stats(): Readonly<StoreStats> {
    const { writer } = this.#p;
    return { records: writer.records, batches: writer.batches, datasyncs: writer.batches, compactions: 0, queued: writer.queued, seq: this.#p.mirror.seq, journalBytes: 0, snapshotBytes: 0 };
  }

  /** The follower found its changes gone from the table: writes stop and /readyz says so until a restart. */
  lose(err: Error): void {
    if (this.#lost !== undefined) return;
    this.#lost = err;
    this.#p.logger.error(err.message);
  }

  caughtUp(): Promise<void> | undefined {
    // The database cannot be reached, or does not answer (the barrier asks it again by itself), or
    // memory can no longer follow it: memory is all there is to answer from.
    if (!this.#p.follower.listening || this.#p.barrier.failing || this.#lost !== undefined || this.#closing !== undefined) return undefined;
    return this.#p.barrier.committedSeq().then(
      (seq) => this.#p.follower.waitFor(seq),
      () => {},
    );
  }

  getJson(id: number): string | undefined {
    return this.#p.mirror.index.get(id);
  }

  listSnapshot(): Promise<ListSnapshot> {
    return this.#p.mirror.lists.take();
  }

  booksAfter(after: number, limit: number): { books: string[]; more: boolean } {
    return this.#p.mirror.index.booksAfter(after, limit);
  }

  changes(since: number, limit = 1000): Change[] {
    const { feed } = this.#p.mirror;
    const entries = feed.after(since, limit);
    if (entries === undefined) throw new ChangesUnavailableError(since, feed.oldest, feed.seq);
    return entries.map(changeOf);
  }

  create(fields: BookFields): Promise<Book> {
    return this.#write({ kind: 'create', fields }) as Promise<Book>;
  }

  update(id: number, patch: BookPatch, condition?: VersionCondition): Promise<Book | undefined> {
    return this.#write({ kind: 'update', id, patch, condition }) as Promise<Book | undefined>;
  }

  remove(id: number, condition?: VersionCondition): Promise<boolean> {
    return this.#write({ kind: 'delete', id, condition }) as Promise<boolean>;
  }

  /** The database keeps its own files: there is no journal to compact. */
  compact(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    clearInterval(this.#probe);
    this.#p.barrier.close();
    await this.#p.writer.idle();
    await this.#p.follower.close();
    this.#p.mirror.feed.release();
    await this.#p.pool.end();
  }

  #write(op: Parameters<Writer['enqueue']>[0]): Promise<Book | boolean | undefined> {
    if (this.#closing !== undefined) return Promise.reject(new StoreUnavailableError('store is closed'));
    if (this.#lost !== undefined) return Promise.reject(new StoreUnavailableError('store is read-only until restart', { cause: this.#lost }));
    const written = this.#p.writer.enqueue(op);
    written.catch(() => this.#startProbe());
    return written;
  }

  /**
   * After a failed write, /readyz says 503 until a write succeeds; a client may send none while it
   * says so, so the store tries a write of its own (one that changes nothing) every few seconds.
   */
  #startProbe(): void {
    if (!this.#p.writer.failed || this.#probe !== undefined || this.#closing !== undefined) return;
    this.#probe = setInterval(() => {
      if (!this.#p.writer.failed) {
        clearInterval(this.#probe);
        this.#probe = undefined;
        return;
      }
      this.#p.writer.enqueue({ kind: 'delete', id: 0, condition: undefined }).catch(() => {});
    }, PROBE_INTERVAL_MS);
    this.#probe.unref();
  }
}
