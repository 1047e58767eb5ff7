import type { FileLayer } from '../../src/fs/durable-fs.ts';
import { ioError, recordingFs } from './recording-fs.ts';

export interface NoFreeInodes {
  fs: FileLayer;
  /** Compactions tried since `fail()`: each starts by creating the next journal. */
  attempts(): number;
  /** From now on, creating a file fails. */
  fail(): void;
  /** From now on, it works again. */
  heal(): void;
}

/**
 * A data directory with no free inodes: once `fail()` is called, creating a file (a new journal, a
 * snapshot's temp file) fails with ENOSPC while appends to the open journal go on, so writes are
 * taken and every compaction fails. fsyncs return at once (`realSync` off): the tests using it are
 * about memory, pacing, logs and readiness; durability is proven elsewhere.
 */
export function noFreeInodes(): NoFreeInodes {
  const rec = recordingFs();
  rec.realSync = false;
  let full = false;
  let attempts = 0;
  return {
    fs: {
      ...rec.fs,
      open: (path, flags, mode) => {
        if (flags === 'ax') attempts++;
        return full && (flags === 'ax' || flags === 'wx') ? Promise.reject(ioError('ENOSPC')) : rec.fs.open(path, flags, mode);
      },
    },
    attempts: () => attempts,
    fail: () => {
      full = true;
      attempts = 0;
    },
    heal: () => {
      full = false;
    },
  };
}
