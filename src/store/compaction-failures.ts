import { LogRate, type Logger } from '../log.ts';

/**
 * Consecutive failed compactions after which the store says it is not ready (docs/contract.md,
 * "Operations endpoints"): with the default pacing, about 3 s of failing (attempts at 0, 1 s and
 * 3 s), so one transient failure, or two, never flaps readiness.
 */
export const NOT_READY_AFTER_FAILURES = 3;

/** While compaction keeps failing, at most one log line per this many ms. */
export const FAILURE_LOG_INTERVAL_MS = 60_000;

/** How compaction retries after failing: the first wait, doubled after each further failure up to the cap. */
export interface RetryPacing {
  /** Ms from the first failure to the next attempt. */
  retryMs: number;
  /** The longest wait between two attempts (ms). */
  maxRetryMs: number;
}

/**
 * A run of failed compactions: how long to wait before the next attempt, whether it has gone on
 * long enough to say so on /readyz, and which failures reach the log. A disk that refuses new files
 * fails every attempt; logging each one (and retrying on every write) filled logs with hundreds of
 * lines a minute. So: the first failure at error, then at most one line per FAILURE_LOG_INTERVAL_MS
 * with the number of failures since the last line, and one line when an attempt succeeds again.
 */
export class CompactionFailures {
  readonly #logger: Logger;
  readonly #pacing: RetryPacing;
  readonly #lines: LogRate;
  /** Consecutive failures: 0 while compactions succeed. */
  #count = 0;
  /** The wait after the last failure (ms). */
  #delay = 0;

  constructor(logger: Logger, pacing: RetryPacing, now: () => number = performance.now.bind(performance)) {
    this.#logger = logger;
    this.#pacing = pacing;
    this.#lines = new LogRate(FAILURE_LOG_INTERVAL_MS, now);
  }

  /** Consecutive failures so far. */
  get count(): number {
    return this.#count;
  }

  /** True once NOT_READY_AFTER_FAILURES attempts in a row have failed, until one succeeds. */
  get failing(): boolean {
    return this.#count >= NOT_READY_AFTER_FAILURES;
  }

  /** Records a failure (logging it when due) and returns the ms to wait before the next attempt. */
  failed(err: unknown): number {
    this.#count++;
    const { retryMs, maxRetryMs } = this.#pacing;
    this.#delay = Math.min(this.#count === 1 ? retryMs : this.#delay * 2, maxRetryMs);
    const retryInMs = this.#delay;
    if (this.#count === 1) this.#lines.reset();
    const left = this.#lines.due();
    if (left === undefined) return retryInMs;
    if (this.#count === 1) this.#logger.error('compaction failed; the journal still holds every change', { err: err as Error, retryInMs });
    else this.#logger.error('compaction is still failing; the journal still holds every change', { err: err as Error, failures: left + 1, consecutive: this.#count, retryInMs });
    return retryInMs;
  }

  /** A compaction finished: the run of failures, if any, is over. */
  succeeded(): void {
    if (this.#count === 0) return;
    this.#logger.info('compaction works again', { failures: this.#count });
    this.#count = 0;
  }
}
