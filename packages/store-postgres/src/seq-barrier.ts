import type { Pool, QueryConfig } from 'pg';
import type { QueryTimer } from './pool-metrics.ts';

/**
 * How long a read waits for the database's seq. A database that does not answer (frozen, or
 * behind a network that drops packets without a reset) would otherwise hold every read: past
 * this, reads answer from memory, as while the database cannot be reached, and /readyz says 503.
 * The same as the pool's connect timeout.
 */
export const READ_TIMEOUT_MS = 3000;
/** node-postgres reads `query_timeout` from a query's config as well; its types name it only on a client's. */
const READ_SEQ: QueryConfig & { query_timeout: number } = { text: 'SELECT seq FROM catalogue', query_timeout: READ_TIMEOUT_MS };
/** While the database does not answer, how often it is asked again with no read to ask it. */
const RETRY_MS = 2000;

/**
 * The catalogue's committed seq, read for BookStore.caughtUp: a read that started after the call,
 * so it covers every write acknowledged before it. Reads asked for while one is in flight share
 * the next one: one query per round trip, however many requests wait.
 */
export class SeqBarrier {
  readonly #pool: Pool;
  readonly #timer: QueryTimer;
  #inFlight: Promise<number> | undefined;
  #next: Promise<number> | undefined;
  #failing = false;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(pool: Pool, timer: QueryTimer) {
    this.#pool = pool;
    this.#timer = timer;
  }

  committedSeq(): Promise<number> {
    if (this.#inFlight === undefined) {
      this.#inFlight = this.#read().finally(() => {
        this.#inFlight = undefined;
      });
      return this.#inFlight;
    }
    // The read in flight may have started before this call: wait for the one after it.
    this.#next ??= this.#inFlight
      .catch(() => 0)
      .then(() => {
        this.#next = undefined;
        return this.committedSeq();
      });
    return this.#next;
  }

  /** Whether the last read failed (timed out): until one succeeds, reads answer from memory. */
  get failing(): boolean {
    return this.#failing;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  async #read(): Promise<number> {
    try {
      const { rows } = await this.#timer.time('seq', () => this.#pool.query<{ seq: string }>(READ_SEQ));
      this.#failing = false;
      return Number(rows[0]?.seq ?? 0);
    } catch (err) {
      this.#failing = true;
      this.#askAgainLater();
      throw err;
    }
  }

  #askAgainLater(): void {
    if (this.#closed || this.#retry !== undefined) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      this.committedSeq().catch(() => {});
    }, RETRY_MS);
    this.#retry.unref();
  }
}
