import type { ChangeEntry } from './change.ts';

/** Changes kept whatever the snapshots do (docs/contract.md, "Change feed"): a client this far behind can still resume. */
export const RETAINED_CHANGES = 10_000;

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
 * seq is found by arithmetic. Kept: at least the last RETAINED_CHANGES, and every change since the
 * last snapshot when that is more. Both survive a restart: the changes since the snapshot are in
 * the journal, and the snapshot carries the last RETAINED_CHANGES up to its own seq (`latest`).
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

  /**
   * `entries`: the contiguous changes up to `seq` that recovery found (the snapshot's, then the
   * journal's); `snapshotSeq`: the snapshot's seq (default: before the first entry).
   */
  constructor(seq: number, entries: ChangeEntry[], onListenerError: (err: unknown) => void, snapshotSeq = seq - entries.length) {
    this.#seq = seq;
    this.#entries = entries;
    this.#snapshotSeq = snapshotSeq;
    this.#onListenerError = onListenerError;
    this.#trim();
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
    for (const entry of batch) this.#entries.push(entry);
    this.#seq += batch.length;
    this.#trim();
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
    this.#trim();
  }

  #trim(): void {
    const floor = Math.min(this.#snapshotSeq, this.#seq - RETAINED_CHANGES);
    const drop = floor - this.oldest;
    if (drop <= 0) return;
    this.#head += drop;
    // Copy out the live part once the dead prefix is as long as it: O(1) amortized per change.
    if (this.#head * 2 >= this.#entries.length) {
      this.#entries = this.#entries.slice(this.#head);
      this.#head = 0;
    }
  }
}
