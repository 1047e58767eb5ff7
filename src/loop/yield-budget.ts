import { setImmediate as nextImmediate } from 'node:timers/promises';

/**
 * The one line that timed jobs (searches, list rebuilds) take their turns from: one job's slice per
 * event-loop turn, whatever the number of jobs. With a slice per job per turn, 64 searches at once
 * made every turn 64 slices long: /healthz p99 425-484 ms against 9-19 ms in one line
 * (`npm run bench:searches`, docs/performance.md, "Searches at once").
 */
const line: (() => void)[] = [];
let lineMoving = false;

function moveLine(): void {
  lineMoving = false;
  line.shift()?.();
  // Queued from within this turn's immediates, the next one runs on the next turn, after its I/O.
  if (line.length > 0) scheduleLine();
}

function scheduleLine(): void {
  if (lineMoving) return;
  lineMoving = true;
  setImmediate(moveLine);
}

function takeTurnInLine(): Promise<void> {
  return new Promise((resolve) => {
    line.push(resolve);
    scheduleLine();
  });
}

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
    // A timed job that starts while others wait for their turn joins the line before its first slice.
    if (clock !== undefined && line.length > 0) this.#start = -Infinity;
  }

  /** `share` units a turn, as the job reports them with `spend` (bytes, say). */
  static counted(share: number): YieldBudget {
    return new YieldBudget(share, undefined);
  }

  /**
   * `ms` a turn by `clock`, the first share starting now, or at once spent when other timed jobs
   * wait for their turn; every later share comes from the one line of timed jobs (one slice a turn).
   */
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

  /** Yields the loop: resolves on a later turn, with a fresh share (a timed one: its turn in the line). */
  async nextTurn(): Promise<void> {
    await (this.#clock === undefined ? nextImmediate() : takeTurnInLine());
    this.#renew();
  }

  /** The same for callback code: `run` is called on a later turn, with a fresh share. */
  onNextTurn(run: () => void): void {
    void this.nextTurn().then(run);
  }

  #renew(): void {
    this.#used = 0;
    if (this.#clock !== undefined) this.#start = this.#clock();
  }
}
