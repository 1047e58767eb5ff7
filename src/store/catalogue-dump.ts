import { silentLogger } from '../log.ts';
import { makeDataDir } from '../fs/data-dir.ts';
import { nodeFileLayer, type FileLayer } from '../fs/durable-fs.ts';
import type { ChangeEntry } from './change.ts';
import { RETAINED_CHANGES } from './change-log.ts';
import { refuseCatalogueIn } from './catalogue-file.ts';
import { acquireLock } from './lock.ts';
import { loadCatalogue } from './recovery.ts';
import { writeSnapshot } from './snapshot.ts';

/**
 * A whole catalogue with its position, as `book-catalogue move` carries it from one store to
 * another: the books, the id the next create gets, the feed's seq and its last changes. Moved
 * with it, ids are never given again, every book keeps its bytes (and so its ETag), and a client
 * following the feed resumes from the seq it had.
 */
export interface CatalogueDump {
  /** Each book's response JSON, ascending id. */
  books: string[];
  nextId: number;
  seq: number;
  /** The last changes up to `seq`, contiguous and ascending, at most RETAINED_CHANGES. */
  changes: ChangeEntry[];
}

/** Reads a data directory's catalogue under its lock (so no service writes it meanwhile). */
export async function readFileDump(dir: string, fs: FileLayer = nodeFileLayer): Promise<CatalogueDump> {
  const release = await acquireLock(fs, dir, silentLogger);
  try {
    const loaded = await loadCatalogue(fs, dir);
    if (loaded.torn !== undefined || loaded.unterminated !== undefined) {
      throw new Error(`data directory ${dir} holds a journal a crash left unfinished: start the service on it once (it repairs it), stop it, then move`);
    }
    return { books: loaded.index.all(), nextId: loaded.nextId, seq: loaded.seq, changes: loaded.changes.slice(-RETAINED_CHANGES) };
  } finally {
    await release();
  }
}

/** Writes a catalogue into an empty data directory (made if missing) as its snapshot; refuses one that holds a catalogue. */
export async function writeFileDump(dir: string, dump: CatalogueDump, fs: FileLayer = nodeFileLayer): Promise<void> {
  await makeDataDir(fs, dir, silentLogger);
  const release = await acquireLock(fs, dir, silentLogger);
  try {
    await refuseCatalogueIn(fs, dir, 'move into an empty one');
    await writeSnapshot(fs, dir, { seq: dump.seq, nextId: dump.nextId }, dump.books.values(), { changes: dump.changes });
  } finally {
    await release();
  }
}
