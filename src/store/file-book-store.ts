import type { Book, BookFields, BookPatch } from '../model/book.ts';
import { ChangesUnavailableError, StoreUnavailableError } from '../faults.ts';
import { LogRate, REPEATED_FAILURE_LOG_MS, type Logger } from '../log.ts';
import type { FileLayer } from '../fs/durable-fs.ts';
import type { DurableBookStore, StoreStats, VersionCondition } from './book-store.ts';
import { changeOf, type Change } from './change.ts';
import { RETAINED_CHANGES, type ChangeFeed, type ChangeLog } from './change-log.ts';
import { Compactor, type CompactionOptions } from './compaction.ts';
import { outcomeOf, planBatch, type Op, type Result } from './batch.ts';
import type { BookIndex, ListSnapshot } from './book-index.ts';
import { journalText } from './journal.ts';
import type { JournalWriter } from './journal-writer.ts';
import { ListSnapshots } from './list-snapshots.ts';
import type { StoreObserver } from './observer.ts';
import { WriteProbe } from './write-probe.ts';

/** What openStore recovered and opened, handed to the store (which owns it from then on). */
export interface RecoveredStore {
  dir: string;
  fs: FileLayer;
  logger: Logger;
  observer: StoreObserver;
  index: BookIndex;
  nextId: number;
  seq: number;
  journal: JournalWriter;
  snapshotBytes: number;
  /** The change feed: the store appends each durable batch, the compactor reports snapshots. */
  feed: ChangeLog;
  release: () => Promise<void>;
}

interface Waiter {
  op: Op;
  resolve: (value: Book | boolean | undefined) => void;
  reject: (err: unknown) => void;
}

function answerWaiter(w: Waiter, result: Result): void {
  try {
    w.resolve(outcomeOf(result));
  } catch (err) {
    w.reject(err);
  }
}

/**
 * The commit rule: changes wait in a queue; one flush at a time decides the whole batch against
 * committed state, appends it with one write and one fdatasync (group commit), and only then
 * changes memory and answers. Reads come from memory alone, so they never see an undurable change.
 */
export class FileBookStore implements DurableBookStore {
  readonly dir: string;
  readonly #logger: Logger;
  /** A disk that refuses every write fails every batch: one line about it per REPEATED_FAILURE_LOG_MS. */
  readonly #failedWrites = new LogRate(REPEATED_FAILURE_LOG_MS);
  readonly #observer: StoreObserver;
  readonly #index: BookIndex;
  readonly #journal: JournalWriter;
  readonly #feed: ChangeLog;
  readonly #release: () => Promise<void>;
  #nextId: number;
  #seq: number;
  readonly #compactor: Compactor;
  #queue: Waiter[] = [];
  /** Waiters the flush loop took from the queue and has not answered yet. */
  #inFlight: Waiter[] = [];
  #flushing: Promise<void> | undefined;
  readonly #lists: ListSnapshots;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Set when a failed write could not be undone: writes fail until a restart recovers from disk. */
  #broken: Error | undefined;
  readonly #stats = { records: 0, batches: 0 };
  /** Runs while a write has failed and none has succeeded since: a probe ends it when the disk works. */
  readonly #probe: WriteProbe;

  constructor(r: RecoveredStore, compaction: CompactionOptions, probeIntervalMs: number) {
    this.dir = r.dir;
    this.#logger = r.logger;
    this.#observer = r.observer;
    this.#index = r.index;
    this.#lists = new ListSnapshots(r.index);
    this.#journal = r.journal;
    this.#feed = r.feed;
    this.#release = r.release;
    this.#nextId = r.nextId;
    this.#seq = r.seq;
    this.#probe = new WriteProbe(r, probeIntervalMs);
    const { fs, dir, logger, observer, journal, snapshotBytes, index, feed } = r;
    this.#compactor = new Compactor(
      {
        fs,
        dir,
        logger,
        observer,
        journal,
        snapshotBytes,
        books: index,
        position: () => ({ seq: this.#seq, nextId: this.#nextId }),
        recentChanges: () => feed.latest(RETAINED_CHANGES),
        snapshotTaken: (seq) => feed.snapshotTaken(seq),
        closed: () => this.#closed,
        kick: () => {
          this.#flushing ??= this.#flushLoop();
        },
      },
      compaction,
    );
  }

  get size(): number {
    return this.#index.size;
  }

  get feed(): ChangeFeed {
    return this.#feed;
  }

  changes(since: number, limit = 1000): Change[] {
    const entries = this.#feed.after(since, limit);
    if (entries === undefined) throw new ChangesUnavailableError(since, this.#feed.oldest, this.#feed.seq);
    return entries.map(changeOf);
  }

  /** This process is the catalogue's only writer (the directory's lock): memory holds every acknowledged change. */
  caughtUp(): undefined {
    return undefined;
  }

  get writable(): boolean {
    return this.#unavailable() === undefined && !this.#probe.running && !this.#compactor.failing;
  }

  get stats(): Readonly<StoreStats> {
    const compactor = this.#compactor;
    return { ...this.#stats, datasyncs: this.#stats.batches, compactions: compactor.completed, queued: this.#queue.length, seq: this.#seq, journalBytes: this.#journal.totalBytes, snapshotBytes: compactor.snapshotBytes };
  }

  getJson(id: number): string | undefined {
    return this.#index.get(id);
  }

  listSnapshot(): Promise<ListSnapshot> {
    return this.#lists.take();
  }

  booksAfter(after: number, limit: number): { books: string[]; more: boolean } {
    return this.#index.booksAfter(after, limit);
  }

  create(fields: BookFields): Promise<Book> {
    return this.#enqueue({ kind: 'create', fields }) as Promise<Book>;
  }

  update(id: number, patch: BookPatch, condition?: VersionCondition): Promise<Book | undefined> {
    return this.#enqueue({ kind: 'update', id, patch, condition }) as Promise<Book | undefined>;
  }

  remove(id: number, condition?: VersionCondition): Promise<boolean> {
    return this.#enqueue({ kind: 'delete', id, condition }) as Promise<boolean>;
  }

  compact(): Promise<void> {
    const unavailable = this.#unavailable();
    return unavailable === undefined ? this.#compactor.request() : Promise.reject(unavailable);
  }

  /** Every call returns the same promise: none resolves before the lock is released. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    try {
      await this.#probe.stop();
      await this.#flushing;
      this.#compactor.cancel(this.#unavailable() as StoreUnavailableError);
      await this.#compactor.idle();
      await this.#journal.close();
    } finally {
      this.#feed.release();
      // The directory must be usable again (a restart, a retry) even when closing the file failed.
      await this.#release();
    }
  }

  /** Why writes are refused now, if they are. */
  #unavailable(): StoreUnavailableError | undefined {
    if (this.#closed) return new StoreUnavailableError('store is closed');
    if (this.#broken !== undefined) return new StoreUnavailableError('store is read-only until restart', { cause: this.#broken });
    return undefined;
  }

  #enqueue(op: Op): Promise<Book | boolean | undefined> {
    const unavailable = this.#unavailable();
    if (unavailable !== undefined) return Promise.reject(unavailable);
    return new Promise((resolve, reject) => {
      this.#queue.push({ op, resolve, reject });
      this.#flushing ??= this.#flushLoop();
    });
  }

  /**
   * The only writer: batches and journal rotations never overlap. The next batch is written before
   * the one just made durable is answered, so its fdatasync runs while this thread sends those
   * answers instead of after them (group commit with the disk kept busy: update ×1.23 req/s,
   * docs/performance.md, "Design choices and their measured effect").
   */
  async #flushLoop(): Promise<void> {
    let answer: (() => void) | undefined;
    try {
      for (;;) {
        if (this.#queue.length > 0 && !this.#compactionWanted()) {
          this.#inFlight = this.#queue;
          this.#queue = [];
          const committing = this.#commit(this.#inFlight);
          answer?.();
          answer = await committing;
          this.#inFlight = [];
          continue;
        }
        answer?.();
        answer = undefined;
        const unavailable = this.#unavailable();
        if (unavailable === undefined) await this.#compactor.maybeStart();
        else this.#compactor.cancel(unavailable);
        // A compaction asked for during that await has no other loop to start it.
        if (this.#queue.length === 0 && !this.#compactionWanted()) break;
      }
    } catch (err) {
      this.#failUnexpectedly(err);
    } finally {
      this.#flushing = undefined;
    }
  }

  #compactionWanted(): boolean {
    return this.#unavailable() === undefined && this.#compactor.wanted();
  }

  /**
   * The flush loop threw where it never should (a logger sink throwing inside failure handling):
   * what the files hold is unknown, so every waiter fails and writes stop until a restart. Waiters
   * already answered ignore the second settlement. Nothing is logged: the logger may be the fault.
   */
  #failUnexpectedly(cause: unknown): void {
    this.#broken = cause instanceof Error ? cause : new Error(String(cause));
    const waiting = this.#inFlight.concat(this.#queue);
    this.#inFlight = [];
    this.#queue = [];
    const err = this.#unavailable() as StoreUnavailableError;
    for (const w of waiting) w.reject(err);
    this.#compactor.cancel(err);
  }

  /**
   * Decides every change of the batch against committed state, writes them once, then applies them
   * to memory; resolves with what answers the batch's waiters. The write starts before this returns.
   */
  async #commit(batch: Waiter[]): Promise<() => void> {
    const index = this.#index;
    const { changes, results, entries, nextId, seq } = planBatch(
      batch.map((w) => w.op),
      (id) => index.get(id),
      this.#nextId,
      this.#seq,
    );
    if (entries.length > 0) {
      let syncSeconds: number;
      try {
        syncSeconds = await this.#journal.append(Buffer.from(journalText(entries), 'utf8'));
      } catch (cause) {
        await this.#undoFailedWrite(batch, cause);
        return () => {};
      }
      this.#probe.succeeded();
      this.#stats.batches++;
      this.#stats.records += seq - this.#seq;
      this.#observer.committed(seq - this.#seq, syncSeconds);
    }
    for (const [id, json] of changes) {
      if (json === null) index.delete(id);
      else index.set(id, json);
    }
    if (changes.size > 0) this.#lists.changed();
    this.#nextId = nextId;
    this.#seq = seq;
    // The feed's hook: only now is the batch durable (fdatasync returned) and in memory.
    if (entries.length > 0) this.#feed.append(entries);
    return () => batch.forEach((w, i) => answerWaiter(w, results[i] as Result));
  }

  /**
   * Atomic failure: every change waiting now fails and the journal is cut back to its last durable
   * length, so no failed change (nor the id a failed create was given) survives in the files. A
   * failed fsync is never retried (the kernel may have dropped the pages: PostgreSQL's fsyncgate);
   * if the cut itself fails, the file's state is unknown and writes stop until a restart.
   */
  async #undoFailedWrite(batch: Waiter[], cause: unknown): Promise<void> {
    const waiting = batch.concat(this.#queue);
    this.#inFlight = waiting;
    this.#queue = [];
    const unlogged = this.#failedWrites.due();
    if (unlogged !== undefined) this.#logger.error('journal write failed; the changes waiting for it were not applied', { err: cause as Error, changes: waiting.length, unlogged });
    this.#observer.writeFailed();
    try {
      await this.#journal.cutBack();
    } catch (cutErr) {
      this.#broken = cutErr as Error;
      // Changes queued during the cut would follow a record still in the file, reusing its
      // sequence number: the journal would then refuse to replay at the next start.
      const unavailable = this.#unavailable() as StoreUnavailableError;
      for (const w of this.#queue) w.reject(unavailable);
      this.#queue = [];
    }
    // Read-only until restart: no probe can change that, so none runs.
    if (this.#broken === undefined) this.#probe.start();
    const err = new StoreUnavailableError('journal write failed', { cause });
    for (const w of waiting) w.reject(err);
  }
}
