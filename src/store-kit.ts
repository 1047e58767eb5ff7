/**
 * What a store in another package builds on (`book-catalogue/store-kit`), so that it serves exactly
 * what the file store does: the books as a process holds them in memory (the index, its list
 * snapshots), the change feed, the rule that decides a batch of writes against committed state,
 * the faults the app maps to answers, and the rate at which a recurring failure is logged.
 * packages/store-postgres is one such store.
 */
export { BookIndex, PAGE, pageOf, type ListSnapshot, type PageText } from './store/book-index.ts';
export { ListSnapshots } from './store/list-snapshots.ts';
export { ChangeLog, RETAINED_CHANGES, type ChangeFeed, type ChangeListener } from './store/change-log.ts';
export { changeOf, type Change, type ChangeEntry, type ChangeType } from './store/change.ts';
export { outcomeOf, planBatch, type BatchPlan, type Op, type Result } from './store/batch.ts';
export type { BookStore, DurableBookStore, StoreStats, VersionCondition } from './store/book-store.ts';
export { NO_STORE_OBSERVER, type StoreObserver } from './store/observer.ts';
export type { CatalogueDump } from './store/catalogue-dump.ts';
export { bookJson, type Book, type BookFields, type BookPatch } from './model/book.ts';
export { MAX_BOOK_ID } from './model/valid-book.ts';
export { BookIdsExhaustedError, ChangesUnavailableError, PreconditionFailedError, StoreUnavailableError } from './faults.ts';
export { LogRate, REPEATED_FAILURE_LOG_MS, type Logger } from './log.ts';
export type { MemoryBudget } from './memory/budget.ts';
