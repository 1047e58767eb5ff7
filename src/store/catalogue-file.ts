import { setTimeout as delay } from 'node:timers/promises';
import { bookJson, type Book } from '../model/book.ts';
import { validCatalogue } from '../model/valid-book.ts';
import { StoreCorruptError } from '../faults.ts';
import { silentLogger } from '../log.ts';
import { makeDataDir, trustDataDir } from '../fs/data-dir.ts';
import { isNotFound, nodeFileLayer, type FileLayer } from '../fs/durable-fs.ts';
import { journalFirstSeq } from './journal.ts';
import { acquireLock } from './lock.ts';
import { loadCatalogue } from './recovery.ts';
import { SNAPSHOT_FILE, writeSnapshot } from './snapshot.ts';

/** A data directory's books and the id the next create gets (readCatalogue, writeCatalogue). */
export interface Catalogue {
  /** Ascending id order. */
  books: Book[];
  /** The id the next create gets (ids are never reused). */
  nextId: number;
}

const READ_ATTEMPTS = 8;

/**
 * Reads the catalogue a data directory holds, for backups: no lock, no change to any file, and a
 * torn final record (a write in flight) is left out. Safe while a live service writes: if a
 * compaction swaps files between our reads (a journal vanishes, or a gap appears), it reads again.
 * Damage that persists across attempts is real and is thrown (StoreCorruptError).
 * Note: a change whose fsync is still in flight may be included; it is acknowledged moments later
 * unless its fsync fails.
 */
export async function readCatalogue(dir: string, fs: FileLayer = nodeFileLayer): Promise<Catalogue> {
  await trustDataDir(fs, dir);
  for (let attempt = 1; ; attempt++) {
    try {
      const loaded = await loadCatalogue(fs, dir);
      return { books: loaded.index.all().map((json) => JSON.parse(json) as Book), nextId: loaded.nextId };
    } catch (err) {
      const raced = isNotFound(err) || err instanceof StoreCorruptError;
      if (!raced || attempt >= READ_ATTEMPTS) throw err;
      await delay(10 * attempt);
    }
  }
}

/**
 * Initialises an empty data directory from a list of books (a restore): ids are kept, the next id
 * follows the largest. Takes the directory's lock while writing, refuses a directory that already
 * holds a catalogue, and writes the snapshot atomically (temp, fsync, rename, fsync of the dir).
 * Every book must pass the API's own rule (model/valid-book.ts): else InvalidBookError, nothing written.
 */
export async function writeCatalogue(dir: string, books: readonly Book[], fs: FileLayer = nodeFileLayer): Promise<void> {
  const sorted = validCatalogue(books);
  await writeSortedCatalogue(dir, sorted.values(), fs);
}

/** Throws when the directory already holds a catalogue: a restore or a move never writes over one. */
export async function refuseCatalogueIn(fs: FileLayer, dir: string, advice: string): Promise<void> {
  const names = await fs.readdir(dir);
  if (names.some((n) => n === SNAPSHOT_FILE || journalFirstSeq(n) !== undefined)) throw new Error(`data directory ${dir} already holds a catalogue; ${advice}`);
}

/** A book that does not follow the one before it in ascending id order (writeSortedCatalogue). */
export class OutOfOrderError extends Error {}

/**
 * writeCatalogue for books that arrive in ascending id order, one at a time (an import read as a
 * stream): none is held after it is written. Resolves with the count; a repeated id rejects, and
 * a smaller one rejects with OutOfOrderError. On any failure the directory is left without a
 * catalogue (the temp file is removed).
 */
export async function writeSortedCatalogue(dir: string, books: Iterator<Book> | AsyncIterator<Book>, fs: FileLayer = nodeFileLayer): Promise<number> {
  await makeDataDir(fs, dir, silentLogger);
  const release = await acquireLock(fs, dir, silentLogger);
  try {
    await refuseCatalogueIn(fs, dir, 'restore into an empty directory');
    let count = 0;
    let lastId = 0;
    const lines: AsyncIterator<string> = {
      async next() {
        const step = await books.next();
        if (step.done === true) return { done: true, value: undefined };
        const { id } = step.value;
        if (id === lastId) throw new TypeError(`id ${id} appears twice`);
        if (id < lastId) throw new OutOfOrderError(`id ${id} follows id ${lastId}`);
        lastId = id;
        count++;
        return { done: false, value: bookJson(step.value) };
      },
    };
    // The largest id is known only at the end: readSnapshot makes the next id follow it.
    await writeSnapshot(fs, dir, { seq: 0, nextId: 1 }, lines);
    return count;
  } finally {
    await release();
  }
}
