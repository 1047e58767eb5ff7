import { setImmediate as nextImmediate } from 'node:timers/promises';

/**
 * A share of one event-loop turn that a long job spends before it yields the loop, so that the job
 * never holds every other client for its whole length: a streamed answer counts the bytes it
 * writes, a search or a list rebuild the milliseconds it takes. The share is renewed only by
 * yielding (setImmediate, which runs after the I/O callbacks that waited meanwhile), never by a
 * callback that runs within the same turn: a 'drain' emitted from process.nextTick, or a resolved
 * promise, would otherwise chain work without ever returning to the loop.
 */
export class YieldBudget {
  readonly #share: number;
  /** The clock a timed share is measured by; undefined when the job counts what it spends. */
  readonly #clock: (() => number) | undefined;
  #start = 0;
  #used = 0;

  private constructor(share: number, clock: (() => number) | undefined) {
    this.#share = share;
    this.#clock = clock;
    this.#renew();
  }

  /** `share` units a turn, as the job reports them with `spend` (bytes, say). */
  static counted(share: number): YieldBudget {
    return new YieldBudget(share, undefined);
  }

  /** `ms` a turn by `clock`, the first share starting now. */
  static timed(ms: number, clock: () => number = () => performance.now()): YieldBudget {
    return new YieldBudget(ms, clock);
  }

  /** Work done this turn, for a counted share (a timed one measures itself). */
  spend(amount: number): void {
    this.#used += amount;
  }

  /** This turn's share is used up: yield before doing more. */
  get spent(): boolean {
    return this.#clock === undefined ? this.#used >= this.#share : this.#clock() >= this.deadline;
  }

  /** When a timed share runs out, on its clock: for work that reads the clock itself. */
  get deadline(): number {
    return this.#start + this.#share;
  }

  /** Yields the loop: resolves on a later turn, with a fresh share. */
  async nextTurn(): Promise<void> {
    await nextImmediate();
    this.#renew();
  }

  /** The same for callback code: `run` is called on a later turn, with a fresh share. */
  onNextTurn(run: () => void): void {
    setImmediate(() => {
      this.#renew();
      run();
    });
  }

  #renew(): void {
    this.#used = 0;
    if (this.#clock !== undefined) this.#start = this.#clock();
  }
}
