import type { Charge, MemoryBudget } from '../memory/budget.ts';
import type { ChangeEntry } from './change.ts';

/**
 * Changes kept whatever the snapshots do, unless the memory budget is spent (docs/contract.md,
 * "Change feed"): a client this far behind can still resume.
 */
export const RETAINED_CHANGES = 10_000;

/**
 * What a retained change costs beyond its book's JSON text: the entry, its array slot and the
 * string's header. Measured as heapUsed after gc (`node --expose-gc`) around 100k updates of one
 * book through the store while compaction fails: 154, 182 and 1148 bytes per change for 64, 95
 * and 1064 characters of Latin-1 JSON, so about 90 plus the characters.
 */
const ENTRY_OVERHEAD_BYTES = 96;

/**
 * What the feed is charged for holding `entry`, read from what it holds with no serialising: two
 * bytes per character, since V8 keeps text outside Latin-1 in two bytes each (a bound, not a
 * measure: Latin-1 JSON costs about half of its part).
 */
export function retainedBytes(entry: ChangeEntry): number {
  return ENTRY_OVERHEAD_BYTES + 2 * (entry.bookJson?.length ?? 0);
}

/** Called with each batch of changes, once it is durable and applied to memory, in seq order. */
export type ChangeListener = (changes: readonly ChangeEntry[]) => void;

/**
 * The read side of the change feed, as the store exposes it (`store.feed`). Every change the
 * store made durable, in `seq` order, each once: nothing that failed to reach the disk ever
 * appears, since the store appends a batch only after its fdatasync returned and memory holds it.
 */
export interface ChangeFeed {
  /** The last durable change's seq (0 before the first change). */
  readonly seq: number;
  /** The lowest `since` still answerable: every change after it is retained. */
  readonly oldest: number;
  /**
   * Up to `limit` changes after `since`, ascending; undefined when `since` is older than
   * `oldest` or newer than `seq` (another history, e.g. a restored backup): reload instead.
   */
  after(since: number, limit: number): ChangeEntry[] | undefined;
  /**
   * Calls `listener` synchronously with every later batch. A listener that throws is dropped
   * (and reported to the store's logger), never allowed to fail the write that published it.
   * Reading `after(…)` in the same turn as subscribing leaves no gap: nothing runs in between.
   * Returns the unsubscribe function.
   */
  subscribe(listener: ChangeListener): () => void;
}

/**
 * Retention + fan-out. Seqs are contiguous (one journal record per change), so the entry for a
 * seq is found by arithmetic. Kept: the last RETAINED_CHANGES, and every change since the last
 * snapshot when that is more. Both survive a restart: the changes since the snapshot are in the
 * journal, and the snapshot carries the last RETAINED_CHANGES up to its own seq (`latest`).
 *
 * Every retained change draws from the memory budget as `retained_changes`: the changes since the
 * last snapshot grow without limit while no snapshot can be taken, and even the last
 * RETAINED_CHANGES of the largest books hold about 240 MB. When the budget is spent (they are cut
 * last of all), the oldest leave memory, fixed retention included; nothing leaves the journal
 * (docs/contract.md, "Change feed").
 */
export class ChangeLog implements ChangeFeed {
  #entries: ChangeEntry[];
  /** Index in #entries of the oldest retained entry (trimmed lazily, in halves). */
  #head = 0;
  #seq: number;
  /** Changes up to this seq are in a snapshot: only those may be dropped. */
  #snapshotSeq: number;
  readonly #listeners = new Set<ChangeListener>();
  readonly #onListenerError: (err: unknown) => void;
  /** retainedBytes of the retained changes, counted while there is a budget to charge them to. */
  #bytes = 0;
  readonly #budget: MemoryBudget | undefined;
  readonly #charge: Charge | undefined;

  /**
   * `entries`: the contiguous changes up to `seq` that recovery found (the snapshot's, then the
   * journal's); `snapshotSeq`: the snapshot's seq (default: before the first entry); `budget`: what
   * the retained changes are charged to (none: they are not counted).
   */
  constructor(seq: number, entries: ChangeEntry[], onListenerError: (err: unknown) => void, snapshotSeq = seq - entries.length, budget?: MemoryBudget) {
    this.#seq = seq;
    this.#entries = entries;
    this.#snapshotSeq = snapshotSeq;
    this.#onListenerError = onListenerError;
    this.#budget = budget;
    this.#charge = budget?.add({ kind: 'retained_changes', moved: () => 0, shed: () => this.#shed() });
    if (this.#charge !== undefined) this.#bytes = this.#bytesOf(this.oldest, seq);
    this.#retain();
  }

  get seq(): number {
    return this.#seq;
  }

  get oldest(): number {
    return this.#seq - (this.#entries.length - this.#head);
  }

  after(since: number, limit: number): ChangeEntry[] | undefined {
    if (!Number.isSafeInteger(since) || since < this.oldest || since > this.#seq) return undefined;
    const from = this.#head + (since - this.oldest);
    return this.#entries.slice(from, from + limit);
  }

  /** The last `count` retained changes (fewer when fewer are retained), ascending: what a snapshot carries. */
  latest(count: number): ChangeEntry[] {
    return this.#entries.slice(Math.max(this.#head, this.#entries.length - count));
  }

  subscribe(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The store's hook: a batch that is durable and applied to memory, seqs following `seq`. */
  append(batch: readonly ChangeEntry[]): void {
    const counted = this.#charge !== undefined;
    for (const entry of batch) {
      this.#entries.push(entry);
      if (counted) this.#bytes += retainedBytes(entry);
    }
    this.#seq += batch.length;
    this.#retain();
    for (const listener of this.#listeners) {
      try {
        listener(batch);
      } catch (err) {
        this.#listeners.delete(listener);
        this.#onListenerError(err);
      }
    }
  }

  /** The compactor's hook: a snapshot holding every change up to `seq` is durable. */
  snapshotTaken(seq: number): void {
    this.#snapshotSeq = Math.max(this.#snapshotSeq, seq);
    this.#retain();
  }

  /** The store closed: its changes no longer count against the budget. */
  release(): void {
    this.#charge?.release();
  }

  /**
   * Drops the changes a snapshot holds beyond the last RETAINED_CHANGES and reports what is left.
   * A change is read once as it is appended and at most once more when it is dropped: O(1)
   * amortized per change.
   */
  #retain(): void {
    this.#dropThrough(Math.min(this.#snapshotSeq, this.#seq - RETAINED_CHANGES), false);
    this.#charge?.set(this.#bytes);
  }

  /**
   * The budget is spent: the oldest retained changes leave memory at once, enough to bring the
   * budget back within its limit and at least half of what they are taken from, so that the next
   * shed waits for as many changes again (each one copies the changes kept). They are taken from
   * those beyond the last RETAINED_CHANGES when that is enough, else from all.
   */
  #shed(): void {
    const budget = this.#budget as MemoryBudget;
    const over = budget.held - budget.limit;
    const fixedFrom = Math.max(this.oldest, this.#seq - RETAINED_CHANGES);
    const extra = this.#bytesOf(this.oldest, fixedFrom);
    const [goal, stop] = over <= extra ? [Math.max(over, extra / 2), fixedFrom] : [Math.max(over, this.#bytes / 2), this.#seq];
    let seq = this.oldest;
    let freed = 0;
    while (freed < goal && seq < stop) freed += retainedBytes(this.#at(++seq));
    this.#dropThrough(seq, true);
    (this.#charge as Charge).set(this.#bytes);
  }

  /** The entry for a retained `seq`. */
  #at(seq: number): ChangeEntry {
    return this.#entries[this.#head + (seq - this.oldest) - 1] as ChangeEntry;
  }

  /** retainedBytes of the retained changes after `from` up to `to`. */
  #bytesOf(from: number, to: number): number {
    const entries = this.#entries;
    const start = this.#head + (from - this.oldest);
    const end = start + (to - from);
    let bytes = 0;
    for (let i = start; i < end; i++) bytes += retainedBytes(entries[i] as ChangeEntry);
    return bytes;
  }

  /**
   * Drops the changes up to `seq`.
   * The dead prefix is copied out once it is as long as the live part (O(1) amortized per change),
   * or at once when `now`: memory the budget asked for must really be freed.
   */
  #dropThrough(seq: number, now: boolean): void {
    const oldest = this.oldest;
    const drop = seq - oldest;
    if (drop <= 0) return;
    if (this.#charge !== undefined) {
      // Whichever is shorter: subtract what goes, or count again what stays.
      const stays = this.#seq - seq;
      this.#bytes = stays < drop ? this.#bytesOf(seq, this.#seq) : this.#bytes - this.#bytesOf(oldest, seq);
    }
    this.#head += drop;
    if (now || this.#head * 2 >= this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
