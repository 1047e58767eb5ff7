import { join } from 'node:path';
import { ChangeLog } from './change-log.ts';
import { silentLogger, type Logger } from '../log.ts';
import { defaultMemoryBudgetBytes, MemoryBudget } from '../memory/budget.ts';
import { COMPACTION_DEFAULTS, type CompactionOptions } from './compaction.ts';
import { makeDataDir } from '../fs/data-dir.ts';
import { openDataFile } from '../fs/data-file.ts';
import { appendAndSync, nodeFileLayer, unlinkIfPresent, writeAtomic, type FileLayer } from '../fs/durable-fs.ts';
import { JournalWriter } from './journal-writer.ts';
import { acquireLock } from './lock.ts';
import { NO_STORE_OBSERVER, type StoreObserver } from './observer.ts';
import { DEFAULT_PROBE_INTERVAL_MS } from './write-probe.ts';
import { loadCatalogue, type LoadedCatalogue } from './recovery.ts';
import type { DurableBookStore } from './book-store.ts';
import { FileBookStore } from './file-book-store.ts';

/** Options of openStore; all optional. */
export interface StoreOptions {
  logger?: Logger;
  /** The file system calls the store makes; tests inject slow or failing ones. */
  fs?: FileLayer;
  compaction?: Partial<CompactionOptions>;
  /** Told of every commit, write failure and compaction (metrics: `createMetrics().storeObserver`). */
  observer?: StoreObserver;
  /** After a failed write, how often the store checks by itself that it can write durably again (ms). Default 5000. */
  probeIntervalMs?: number;
  /**
   * What the change feed's retained changes are charged to (`retained_changes`;
   * SECURITY.md, "Memory budget"): pass the one given to `createApp`, so that one budget bounds
   * them all. Default: a budget of its own of `defaultMemoryBudgetBytes()`.
   */
  memoryBudget?: MemoryBudget;
}

/**
 * Opens (creating if needed, mode 0700) the data directory, takes its lock and recovers:
 * snapshot + the journal records after it, a torn final record cut away (kept beside it, logged at error), a
 * whole last record that lacks its newline kept and its newline written (logged at error), temp
 * files and journals a finished compaction no longer needs removed. Damage anywhere else stops
 * here with StoreCorruptError naming the file and byte offset.
 */
export async function openStore(dir: string, options: StoreOptions = {}): Promise<DurableBookStore> {
  const logger = options.logger ?? silentLogger;
  const fs = options.fs ?? nodeFileLayer;
  await makeDataDir(fs, dir, logger);
  const release = await acquireLock(fs, dir, logger);
  try {
    const loaded = await loadCatalogue(fs, dir);
    await repair(fs, dir, loaded, logger);
    const journal = await JournalWriter.open(fs, dir, logger, loaded.journals, loaded.seq);
    const observer = options.observer ?? NO_STORE_OBSERVER;
    const onListenerError = (err: unknown): void => logger.error('a change feed listener threw; it was unsubscribed', { err: err as Error });
    const budget = options.memoryBudget ?? new MemoryBudget(defaultMemoryBudgetBytes());
    const feed = new ChangeLog(loaded.seq, loaded.changes, onListenerError, loaded.snapshotSeq, budget);
    const recovered = { dir, fs, logger, observer, index: loaded.index, nextId: loaded.nextId, seq: loaded.seq, journal, snapshotBytes: loaded.snapshotBytes, feed, release };
    const store = new FileBookStore(recovered, { ...COMPACTION_DEFAULTS, ...options.compaction }, options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS);
    observer.opened(store);
    return store;
  } catch (err) {
    await release();
    throw err;
  }
}

async function repair(fs: FileLayer, dir: string, loaded: LoadedCatalogue, logger: Logger): Promise<void> {
  if (loaded.torn !== undefined) {
    const { name, offset, bytes, ids } = loaded.torn;
    const file = join(dir, name);
    // The evidence is kept: what was cut may be read later, and is never part of the catalogue.
    const keptIn = join(dir, `${name}.torn-${offset}`);
    await writeAtomic(fs, keptIn, (write) => write(bytes));
    logger.error('cut a torn final journal record left by a crash; its bytes are kept beside the journal', { file, offset, bytes: bytes.length, keptIn, ids });
    await cutTo(fs, file, offset);
  }
  if (loaded.unterminated !== undefined) {
    const { name, offset, damagedByte } = loaded.unterminated;
    const file = join(dir, name);
    // The record parses and passes its checksum: it was written whole and may have been
    // acknowledged, so it is kept; only its newline is written again, before any record follows it.
    logger.error('the last journal record lacks its newline; the record is whole and kept, and its newline is written', { file, offset, damagedByte });
    if (damagedByte !== undefined) await cutTo(fs, file, offset);
    const handle = await openDataFile(fs, file, 'a');
    try {
      await appendAndSync(handle, NEWLINE);
    } finally {
      await handle.close();
    }
  }
  const leftovers = [...loaded.temps, ...loaded.stale];
  for (const name of leftovers) {
    await unlinkIfPresent(fs, join(dir, name));
  }
  if (leftovers.length > 0) {
    await fs.syncDir(dir);
    logger.info('removed files a crash left mid-compaction', { files: leftovers });
  }
}

const NEWLINE = Buffer.from('\n', 'latin1');

/** Truncates `file` to `length` bytes, durably. */
async function cutTo(fs: FileLayer, file: string, length: number): Promise<void> {
  const handle = await openDataFile(fs, file, 'r+');
  try {
    await handle.truncate(length);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}
