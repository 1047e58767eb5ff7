/**
 * One pending "try again later" at a time, each wait twice the last, from `firstMs` up to
 * `maxMs`, until `reset()` (the thing tried succeeded). Unref'd: a retry never keeps a process up.
 */
export class RetryTimer {
  readonly #firstMs: number;
  readonly #maxMs: number;
  #waitMs: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(firstMs: number, maxMs = firstMs) {
    this.#firstMs = firstMs;
    this.#maxMs = maxMs;
    this.#waitMs = firstMs;
  }

  /** Runs `run` after the current wait, unless a retry is pending already. */
  schedule(run: () => void): void {
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      run();
    }, this.#waitMs);
    this.#timer.unref();
    this.#waitMs = Math.min(this.#waitMs * 2, this.#maxMs);
  }

  reset(): void {
    this.#waitMs = this.#firstMs;
  }

  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
