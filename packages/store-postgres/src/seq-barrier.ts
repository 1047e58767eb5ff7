import type { Pool } from 'pg';
import type { QueryTimer } from './pool-metrics.ts';

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

  async #read(): Promise<number> {
    const { rows } = await this.#timer.time('seq', () => this.#pool.query<{ seq: string }>('SELECT seq FROM catalogue'));
    return Number(rows[0]?.seq ?? 0);
  }
}
