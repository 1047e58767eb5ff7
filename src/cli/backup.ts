import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { bookJson, type Book } from '../model/book.ts';
import { validBookAt } from '../model/valid-book.ts';
import { OutOfOrderError, readCatalogue, writeCatalogue, writeSortedCatalogue } from '../store/catalogue-file.ts';
import { strictUtf8Text } from '../http/utf8.ts';
import { arrayElements } from './json-array.ts';
import type { BackupCommand } from './backup-command.ts';

export interface BackupStreams {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Books per write to stdout: large catalogues stream out without one giant string. */
const BOOKS_PER_CHUNK = 1000;

/** Runs `export` or `import`; resolves with the exit code after one line on stderr for a failure. */
export async function runBackupCommand(command: BackupCommand, streams: BackupStreams): Promise<number> {
  const dataDir = resolve(command.dataDir);
  try {
    if (command.kind === 'export') {
      await exportCatalogue(dataDir, streams.stdout);
    } else {
      const count = await importCatalogue(command.file, dataDir, streams.stdin);
      streams.stderr.write(`book-catalogue: imported ${count} book${count === 1 ? '' : 's'} into ${dataDir}\n`);
    }
    return 0;
  } catch (err) {
    streams.stderr.write(`book-catalogue: ${command.kind} failed: ${(err as Error).message}\n`);
    return 1;
  }
}

/**
 * Writes the catalogue as a JSON array, one book per line, ascending id. Reads without the lock,
 * so it works while the service runs; readCatalogue gives one consistent state.
 */
export async function exportCatalogue(dataDir: string, out: NodeJS.WritableStream): Promise<void> {
  const info = await stat(dataDir).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) throw new Error(`no data directory at ${dataDir}`);
  const { books } = await readCatalogue(dataDir);
  if (books.length === 0) return write(out, '[]\n');
  for (let i = 0; i < books.length; i += BOOKS_PER_CHUNK) {
    const lines = books.slice(i, i + BOOKS_PER_CHUNK).map(bookJson);
    await write(out, `${i === 0 ? '[\n' : ',\n'}${lines.join(',\n')}`);
  }
  await write(out, '\n]\n');
}

async function write(out: NodeJS.WritableStream, chunk: string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/**
 * Loads an export into an empty data directory: ids kept, the next id after the largest. The file
 * is read as a stream and each book written as soon as it is checked, so memory stays flat however
 * large the catalogue (books in ascending id order, as export writes them). A file in another
 * order is read a second time and sorted in memory; stdin cannot be read twice, so there it is
 * refused. The directory's lock makes this fail while a service runs; a directory that already
 * holds a catalogue is refused. The file must be UTF-8 by the API's own rule (http/utf8.ts: invalid
 * bytes are refused naming their offset, never replaced), and every book must pass the API's rules.
 */
export async function importCatalogue(file: string, dataDir: string, stdin: NodeJS.ReadableStream): Promise<number> {
  const name = file === '-' ? 'stdin' : file;
  const read = (): AsyncGenerator<Book> => checkedBooks(arrayElements(strictUtf8Text(file === '-' ? stdin : fileBytes(file), name), name));
  try {
    return await writeSortedCatalogue(dataDir, read());
  } catch (err) {
    if (!(err instanceof OutOfOrderError)) throw err;
    if (file === '-') throw new Error(`books on stdin must be in ascending id order, as export writes them (${err.message}); pass a file instead`);
  }
  const books: Book[] = [];
  for await (const book of read()) books.push(book);
  await writeCatalogue(dataDir, books);
  return books.length;
}

/**
 * The file's bytes, opened when they are first read: a file that cannot be opened is then an error
 * of that read, which the command reports in its one line, never an 'error' event nobody listens to.
 */
async function* fileBytes(file: string): AsyncGenerator<Buffer> {
  yield* createReadStream(file, { highWaterMark: 1 << 20 });
}

/** Each value as a book, by the API's own rule (model/valid-book.ts), or the index of the first that is not. */
async function* checkedBooks(values: AsyncGenerator<unknown>): AsyncGenerator<Book> {
  let index = 0;
  for await (const value of values) yield validBookAt(value, index++);
}
