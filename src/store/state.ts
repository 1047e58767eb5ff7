import type { ChangeLog } from './change-log.ts';
import type { Logger } from '../log.ts';
import type { BookIndex } from './book-index.ts';
import type { FileHandleLike, FileLayer } from '../fs/durable-fs.ts';
import type { StoreObserver } from './observer.ts';

export interface JournalFile {
  name: string;
  firstSeq: number;
  /** Bytes of whole, durable records. */
  bytes: number;
}

export interface ActiveJournal extends JournalFile {
  handle: FileHandleLike;
}

export interface StoreState {
  dir: string;
  fs: FileLayer;
  logger: Logger;
  observer: StoreObserver;
  index: BookIndex;
  nextId: number;
  seq: number;
  journal: ActiveJournal;
  /** Journals before the active one, still needed until a snapshot covers them. */
  older: JournalFile[];
  snapshotBytes: number;
  /** The change feed: the store appends each durable batch, the compactor reports snapshots. */
  feed: ChangeLog;
  release: () => Promise<void>;
}
