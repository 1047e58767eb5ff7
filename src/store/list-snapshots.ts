import { YieldBudget } from '../loop/yield-budget.ts';
import type { BookIndex, ListSnapshot } from './book-index.ts';

/** Milliseconds of list-text rebuilding per event-loop turn: small enough that a scavenge landing in it still leaves the turn well under 20 ms (`npm run bench:list-after-writes`: longest gap 10.3–15.4 ms at 1M books). */
const SETTLING_SLICE_MS = 2;
/** Turns of rebuilding before the rest is done at once: ~2 s of slices, past what 5M books need. */
const MAX_SETTLING_TURNS = 1000;

/**
 * The list snapshots of an index, cached until the next change (`changed()`): what
 * BookStore.listSnapshot answers for every store that keeps its books in a BookIndex.
 */
export class ListSnapshots {
  readonly #index: BookIndex;
  #snapshot: ListSnapshot | undefined;
  #settling: Promise<ListSnapshot> | undefined;

  constructor(index: BookIndex) {
    this.#index = index;
  }

  /** The index changed: the next snapshot is of the new state. */
  changed(): void {
    this.#snapshot = undefined;
  }

  take(): Promise<ListSnapshot> {
    // A first slice at once, as the timed job it is: none while other timed jobs wait their turn
    // (a spent share's deadline has passed), so a list asking during searches joins the line.
    if (this.#snapshot === undefined && this.#settling === undefined && this.#index.buildListTexts(YieldBudget.timed(SETTLING_SLICE_MS).deadline) === 0) {
      this.#snapshot = this.#index.snapshot();
    }
    if (this.#snapshot !== undefined) return Promise.resolve(this.#snapshot);
    // One rebuild for every list and search that asks meanwhile: each would otherwise take its own slice per turn.
    this.#settling ??= this.#settle();
    return this.#settling;
  }

  /**
   * Goes on rebuilding the changed pages' list text a slice per event-loop turn, then takes the
   * snapshot of the state committed by then (one committed state: each write wholly in or out).
   * After MAX_SETTLING_TURNS, writes outpacing the rebuild, the rest is rebuilt at once.
   */
  async #settle(): Promise<ListSnapshot> {
    try {
      const slice = YieldBudget.timed(SETTLING_SLICE_MS);
      let turn = 0;
      do await slice.nextTurn();
      while (++turn < MAX_SETTLING_TURNS && this.#index.buildListTexts(slice.deadline) > 0);
      this.#snapshot ??= this.#index.snapshot();
      return this.#snapshot;
    } finally {
      this.#settling = undefined;
    }
  }
}
