import { LogRate, outcomeOf, planBatch, REPEATED_FAILURE_LOG_MS, RETAINED_CHANGES, StoreUnavailableError, type Book, type ChangeEntry, type Logger, type Op, type StoreObserver } from 'book-catalogue/store-kit';
import type { Pool, PoolClient } from 'pg';
import { ConnectionLostError, withConnection } from './checkout.ts';
import type { Follower } from './follower.ts';
import type { QueryTimer } from './pool-metrics.ts';
import { CHANNEL } from './schema.ts';

/** Changes book_changes keeps beyond what any process holds: a process this far behind must restart. */
export const TABLE_RETAINED_CHANGES = 10 * RETAINED_CHANGES;
/** The table is trimmed when a commit crosses a multiple of this. */
const TRIM_EVERY = 1000;

interface Waiter {
  op: Op;
  resolve: (value: Book | boolean | undefined) => void;
  reject: (err: unknown) => void;
}

export interface WriterOptions {
  pool: Pool;
  follower: Follower;
  logger: Logger;
  observer: StoreObserver;
  timer: QueryTimer;
}

/** What one transaction committed: the changes, each op's result, and how long its COMMIT took. */
interface Committed {
  entries: ChangeEntry[];
  results: ReturnType<typeof planBatch>['results'];
  commitSeconds: number;
}

/**
 * The write path: ops queue while a transaction is in flight, and the next transaction decides
 * them all together (group commit, as the file store's journal does). Each transaction first locks
 * the `catalogue` row, so transactions of every process commit one at a time: the seqs a
 * transaction gives follow the last committed ones, and seq order is commit order (a sequence
 * alone would not be: a transaction that took seq 11 could commit before the one holding 10, and a
 * follower reading from 11 would never see 10). An op is answered only once its transaction has
 * committed (synchronous_commit: durable) and this process's memory holds it, or, while the
 * database cannot be reached, once committed: memory catches up when it can be reached again.
 */
export class Writer {
  readonly #o: WriterOptions;
  #queue: Waiter[] = [];
  #flushing: Promise<void> | undefined;
  /** Committed batches waiting for memory to hold them before they are answered. */
  readonly #answering = new Set<Promise<void>>();
  /** Transactions committed and records written, for StoreStats. */
  batches = 0;
  records = 0;
  /** Set by a failed transaction, cleared by the next one that commits. */
  failed = false;
  /** A database that is down fails every write, and one that cuts connections every retry: one line per interval of each. */
  readonly #failures = new LogRate(REPEATED_FAILURE_LOG_MS);
  readonly #retries = new LogRate(REPEATED_FAILURE_LOG_MS);

  constructor(options: WriterOptions) {
    this.#o = options;
  }

  get queued(): number {
    return this.#queue.length;
  }

  enqueue(op: Op): Promise<Book | boolean | undefined> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ op, resolve, reject });
      this.#flushing ??= this.#flushLoop();
    });
  }

  /** Resolves once every queued op is answered. */
  async idle(): Promise<void> {
    await this.#flushing;
    await Promise.all(this.#answering);
  }

  async #flushLoop(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue;
        this.#queue = [];
        await this.#run(batch);
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  async #run(batch: Waiter[]): Promise<void> {
    let committed: Committed;
    try {
      committed = await this.#transaction(batch.map((w) => w.op));
    } catch (cause) {
      this.failed = true;
      const err = new StoreUnavailableError('database write failed', { cause });
      for (const w of batch) w.reject(err);
      this.#report(() => {
        this.#o.observer.writeFailed();
        const unlogged = this.#failures.due();
        if (unlogged !== undefined) this.#o.logger.error('a PostgreSQL write transaction failed', { err: cause as Error, changes: batch.length, unlogged });
      });
      return;
    }
    this.failed = false;
    // Answered once memory holds the batch (and every change committed before it), so reads here
    // see it; the next batch's transaction starts meanwhile instead of waiting for that.
    const answering = this.#o.follower.committed(committed.entries).then(() => {
      this.#answering.delete(answering);
      batch.forEach((w, i) => {
        try {
          w.resolve(outcomeOf(committed.results[i]));
        } catch (err) {
          w.reject(err);
        }
      });
    });
    this.#answering.add(answering);
    if (committed.entries.length === 0) return;
    this.batches++;
    this.records += committed.entries.length;
    this.#report(() => this.#o.observer.committed(committed.entries.length, committed.commitSeconds));
  }

  /**
   * Tells the observer and the log, once the batch's answers are settled or on their way: one that
   * throws (a closed log pipe) changes neither those answers nor the writer, since the database,
   * not this process, holds what committed.
   */
  #report(tell: () => void): void {
    try {
      tell();
    } catch {
      // Nothing else to tell it to: the logger may be what failed.
    }
  }

  /**
   * A restart or failover ends every connection the pool holds, and each is found dead only when
   * next used. A transaction whose connection was lost before it sent COMMIT did not commit, so it
   * runs again on another connection, as many times as the pool has connections that may be dead
   * (after them it opens a new one). A loss once COMMIT was sent leaves the outcome unknown: that
   * write fails (docs/scaling-out.md, "In-flight writes at a failover").
   */
  async #transaction(ops: readonly Op[]): Promise<Committed> {
    for (let attempt = 0; ; attempt++) {
      let commitSent = false;
      let committed: Committed;
      try {
        committed = await withConnection(this.#o.pool, (client) => this.#attempt(client, ops, () => (commitSent = true)));
      } catch (err) {
        if (err instanceof ConnectionLostError && commitSent) throw new ConnectionLostError(err.cause, { afterCommit: true });
        if (!(err instanceof ConnectionLostError) || attempt >= this.#o.pool.options.max) throw err;
        const unlogged = this.#retries.due();
        if (unlogged !== undefined) this.#o.logger.warn('a PostgreSQL connection was lost before its write transaction committed; running it again on another', { err, unlogged });
        continue;
      }
      return committed;
    }
  }

  async #attempt(client: PoolClient, ops: readonly Op[], committing: () => void): Promise<Committed> {
    const { timer } = this.#o;
    const [, position] = (await timer.time('write', () => client.query('BEGIN; SELECT seq, next_id FROM catalogue FOR UPDATE'))) as unknown as [unknown, { rows: { seq: string; next_id: string }[] }];
    const row = position.rows[0];
    if (row === undefined) throw new Error('the catalogue table has no row');
    const seq = Number(row.seq);
    const current = await this.#currentBooks(client, ops);
    const plan = planBatch(ops, (id) => current.get(id), Number(row.next_id), seq);
    if (plan.entries.length === 0) {
      await client.query('ROLLBACK');
      return { entries: [], results: plan.results, commitSeconds: 0 };
    }
    await timer.time('write', () => writeChanges(client, plan.entries, plan.changes, plan.seq, plan.nextId, seq));
    const start = performance.now();
    committing();
    await timer.time('commit', () => client.query('COMMIT'));
    return { entries: plan.entries, results: plan.results, commitSeconds: (performance.now() - start) / 1000 };
  }

  /** The committed JSON of every book the ops name, read under the row lock (so no later commit can change it first). */
  async #currentBooks(client: PoolClient, ops: readonly Op[]): Promise<Map<number, string>> {
    const ids = [...new Set(ops.flatMap((op) => (op.kind === 'create' ? [] : [op.id])))];
    if (ids.length === 0) return new Map();
    const { rows } = await this.#o.timer.time('write', () => client.query<{ id: string; json: string }>('SELECT id, json FROM books WHERE id = ANY($1::bigint[])', [ids]));
    return new Map(rows.map((r) => [Number(r.id), r.json]));
  }
}

/**
 * One statement: the books' new states, the feed's rows, the position, the feed trimmed when this
 * commit crosses a multiple of TRIM_EVERY, and the notification (sent at commit, in commit order).
 */
function writeChanges(client: PoolClient, entries: readonly ChangeEntry[], changes: ReadonlyMap<number, string | null>, seq: number, nextId: number, before: number): Promise<unknown> {
  const putIds: number[] = [];
  const putJson: string[] = [];
  const deleted: number[] = [];
  for (const [id, json] of changes) {
    if (json === null) deleted.push(id);
    else {
      putIds.push(id);
      putJson.push(json);
    }
  }
  const trimTo = Math.floor(seq / TRIM_EVERY) > Math.floor(before / TRIM_EVERY) ? seq - TABLE_RETAINED_CHANGES : 0;
  return client.query(
    `WITH gone AS (DELETE FROM books WHERE id = ANY($1::bigint[])),
      put AS (INSERT INTO books (id, json) SELECT * FROM unnest($2::bigint[], $3::text[]) ON CONFLICT (id) DO UPDATE SET json = EXCLUDED.json),
      fed AS (INSERT INTO book_changes (seq, type, id, book) SELECT * FROM unnest($4::bigint[], $5::text[], $6::bigint[], $7::text[])),
      trimmed AS (DELETE FROM book_changes WHERE seq <= $8),
      moved AS (UPDATE catalogue SET seq = $9, next_id = $10 RETURNING seq)
    SELECT pg_notify('${CHANNEL}', seq::text) FROM moved`,
    [deleted, putIds, putJson, entries.map((e) => e.seq), entries.map((e) => e.type), entries.map((e) => e.id), entries.map((e) => e.bookJson), trimTo, seq, nextId],
  );
}
