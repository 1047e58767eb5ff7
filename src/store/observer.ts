import type { DurableBookStore } from './book-store.ts';

/**
 * What the store reports as it works (StoreOptions.observer), for metrics: called on the write
 * path, so an implementation only counts and returns.
 */
export interface StoreObserver {
  /** Once, when the store has opened: figures such as sizes are read from it when needed. */
  opened(store: DurableBookStore): void;
  /** A group commit is durable: how many journal records it wrote and how long its fdatasync took. */
  committed(records: number, syncSeconds: number): void;
  /** A journal write or fdatasync failed; the changes waiting for it were refused. */
  writeFailed(): void;
  /** A compaction finished: from the journal's rotation until the snapshot was durable. */
  compacted(seconds: number): void;
  /** A compaction failed (the journal still holds every change); the next attempt waits a while. */
  compactionFailed(): void;
}

export const NO_STORE_OBSERVER: StoreObserver = {
  opened: () => {},
  committed: () => {},
  writeFailed: () => {},
  compacted: () => {},
  compactionFailed: () => {},
};
