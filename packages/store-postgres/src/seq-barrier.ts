import type { Pool } from 'pg';
import type { QueryTimer } from './pool-metrics.ts';
import { RetryTimer } from './retry-timer.ts';
import { timedRead } from './timeouts.ts';

/** The read, failed past READ_TIMEOUT_MS. */
const READ_SEQ = timedRead('SELECT seq FROM catalogue');
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
  readonly #askAgain = new RetryTimer(RETRY_MS);
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

  /**
   * Whether the last read failed (no answer within READ_TIMEOUT_MS, or an error): until one
   * succeeds, reads answer from memory.
   */
  get failing(): boolean {
    return this.#failing;
  }

  close(): void {
    this.#closed = true;
    this.#askAgain.cancel();
  }

  async #read(): Promise<number> {
    try {
      const { rows } = await this.#timer.time('seq', () => this.#pool.query<{ seq: string }>(READ_SEQ));
      this.#failing = false;
      return Number(rows[0]?.seq ?? 0);
    } catch (err) {
      this.#failing = true;
      if (!this.#closed) this.#askAgain.schedule(() => void this.committedSeq().catch(() => {}));
      throw err;
    }
  }
}
