import { once } from 'node:events';
import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { text } from 'node:stream/consumers';
import { bookJson, type Book } from '../books/model.ts';
import { MAX_TEXT_LENGTH, MAX_YEAR, MIN_YEAR, parseBookFields } from '../books/validate.ts';
import { readCatalogue, writeCatalogue } from '../store/catalogue-file.ts';
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
 * Loads an export into an empty data directory: ids kept, the next id after the largest.
 * writeCatalogue takes the directory's lock (so a running service makes this fail) and refuses a
 * directory that already holds a catalogue. Every book must pass the API's own rules.
 */
export async function importCatalogue(file: string, dataDir: string, stdin: NodeJS.ReadableStream): Promise<number> {
  const source = file === '-' ? await text(stdin) : await readFile(file, 'utf8');
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch (err) {
    throw new Error(`${file === '-' ? 'stdin' : file} is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(value)) throw new Error('expected a JSON array of books, as export writes');
  const books = value.map(checkBook);
  await writeCatalogue(dataDir, books);
  return books.length;
}

function checkBook(value: unknown, index: number): Book {
  const b = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  try {
    if (!Number.isSafeInteger(b.id) || (b.id as number) < 1) throw new Error('bad id');
    return { id: b.id as number, ...parseBookFields(b) };
  } catch {
    throw new Error(
      `book at index ${index} is not valid: expected a positive integer id, title and author (not blank, at most ${MAX_TEXT_LENGTH} characters) and an integer year from ${MIN_YEAR} to ${MAX_YEAR}`,
    );
  }
}
