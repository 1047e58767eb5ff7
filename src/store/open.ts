import { join } from 'node:path';
import { ChangeLog } from './change-log.ts';
import { silentLogger, type Logger } from '../log.ts';
import { COMPACTION_DEFAULTS, type CompactionOptions } from './compaction.ts';
import { createForAppend, FILE_MODE, makeDataDir, nodeFileLayer, unlinkIfPresent, writeAtomic, type FileHandleLike, type FileLayer } from '../fs/durable-fs.ts';
import { journalName } from './journal.ts';
import { acquireLock } from './lock.ts';
import { NO_STORE_OBSERVER, type StoreObserver } from './observer.ts';
import { DEFAULT_PROBE_INTERVAL_MS } from './write-probe.ts';
import { loadCatalogue, type LoadedCatalogue } from './recovery.ts';
import type { ActiveJournal } from './state.ts';
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
}

/**
 * Opens (creating if needed, mode 0700) the data directory, takes its lock and recovers:
 * snapshot + the journal records after it, a torn final record cut away (kept beside it, logged at error), temp
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
    const journal = await activeJournal(fs, dir, loaded);
    const older = loaded.journals.filter((j) => j.name !== journal.name);
    const observer = options.observer ?? NO_STORE_OBSERVER;
    const feed = new ChangeLog(loaded.seq, loaded.changes, (err) => logger.error('a change feed listener threw; it was unsubscribed', { err: err as Error }));
    const state = { dir, fs, logger, observer, index: loaded.index, nextId: loaded.nextId, seq: loaded.seq, journal, older, snapshotBytes: loaded.snapshotBytes, feed, release };
    const store = new FileBookStore(state, { ...COMPACTION_DEFAULTS, ...options.compaction }, options.probeIntervalMs ?? DEFAULT_PROBE_INTERVAL_MS);
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
    const handle = await fs.open(file, 'r+');
    try {
      await handle.truncate(loaded.torn.offset);
      await handle.datasync();
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

/** New records go to the last journal when it ends at the last record; otherwise to a new one. */
async function activeJournal(fs: FileLayer, dir: string, loaded: LoadedCatalogue): Promise<ActiveJournal> {
  const last = loaded.journals.at(-1);
  let handle: FileHandleLike;
  if (last !== undefined && last.lastSeq === loaded.seq) {
    handle = await fs.open(join(dir, last.name), 'a', FILE_MODE);
    return { name: last.name, firstSeq: last.firstSeq, bytes: last.bytes, handle };
  }
  const name = journalName(loaded.seq + 1);
  handle = await createForAppend(fs, join(dir, name));
  return { name, firstSeq: loaded.seq + 1, bytes: 0, handle };
}
