import { mkdir, open, readFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { StoreCorruptError, StoreUnavailableError } from '../errors.ts';
import { silentLogger, type Logger } from '../log.ts';
import { bookJson, type Book, type BookFields, type BookPatch } from '../books/model.ts';
import { acquireLock } from './lock.ts';

export const JOURNAL_FILE = 'books.jsonl';

export interface StoreOptions {
  logger?: Logger;
}

export interface BookStore {
  readonly dir: string;
  readonly size: number;
  get(id: number): Book | undefined;
  /** The book as response JSON (`id, title, author, year`), cached. */
  getJson(id: number): string | undefined;
  /** Every book in ascending id order, as a JSON array, cached until the next change. */
  listJson(): string;
  list(): Book[];
  create(fields: BookFields): Promise<Book>;
  /** undefined when no book has that id (it may have been deleted while the body was read). */
  update(id: number, patch: BookPatch): Promise<Book | undefined>;
  remove(id: number): Promise<boolean>;
  close(): Promise<void>;
}

type Op =
  | { kind: 'create'; fields: BookFields }
  | { kind: 'update'; id: number; patch: BookPatch }
  | { kind: 'delete'; id: number };

interface Waiter {
  op: Op;
  resolve: (value: Book | boolean | undefined) => void;
  reject: (err: unknown) => void;
}

interface Entry {
  book: Book;
  json: string;
}

/**
 * Opens (creating if needed) the data directory, takes its lock and replays the journal.
 * Every change is one JSON line `{"seq","op","book"|"id","crc"}`; changes that arrive while a
 * flush is in flight are written together with one write and one fdatasync (group commit), and
 * memory changes only after that fdatasync returned, so reads never see an undurable change.
 */
export async function openStore(dir: string, options: StoreOptions = {}): Promise<BookStore> {
  const logger = options.logger ?? silentLogger;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const release = await acquireLock(dir, logger);
  try {
    const path = join(dir, JOURNAL_FILE);
    const state = await replay(path, logger);
    const handle = await open(path, 'a', 0o600);
    return new FileBookStore(dir, handle, state, release, logger);
  } catch (err) {
    await release();
    throw err;
  }
}

interface ReplayState {
  books: Map<number, Entry>;
  nextId: number;
  seq: number;
}

async function replay(path: string, logger: Logger): Promise<ReplayState> {
  const state: ReplayState = { books: new Map(), nextId: 1, seq: 0 };
  let text: Buffer;
  try {
    text = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return state;
    throw err;
  }
  let offset = 0;
  while (offset < text.length) {
    let end = text.indexOf(10, offset);
    const last = end === -1 || end === text.length - 1;
    if (end === -1) end = text.length;
    const record = parseRecord(text.subarray(offset, end));
    if (record === undefined || record.seq !== state.seq + 1) {
      if (!last) throw new StoreCorruptError(path, offset, 'record does not parse or fails its checksum');
      logger.warn('discarding a torn final journal record left by a crash', { file: path, offset });
      const handle = await open(path, 'r+');
      try {
        await handle.truncate(offset);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      break;
    }
    state.seq = record.seq;
    if (record.op === 'put') {
      state.books.set(record.book.id, { book: record.book, json: bookJson(record.book) });
      if (record.book.id >= state.nextId) state.nextId = record.book.id + 1;
    } else {
      state.books.delete(record.id);
      if (record.id >= state.nextId) state.nextId = record.id + 1;
    }
    offset = end + 1;
  }
  return state;
}

type JournalRecord = { seq: number; op: 'put'; book: Book } | { seq: number; op: 'del'; id: number };

const CRC_MARK = ',"crc":';

function encodeRecord(seq: number, body: string): string {
  const prefix = `{"seq":${seq},${body}`;
  return `${prefix}${CRC_MARK}${crc32(prefix)}}\n`;
}

function parseRecord(line: Buffer): JournalRecord | undefined {
  const text = line.toString('utf8');
  const mark = text.lastIndexOf(CRC_MARK);
  if (mark === -1) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = value as { seq?: unknown; op?: unknown; crc?: unknown; book?: unknown; id?: unknown };
  if (r.crc !== crc32(text.slice(0, mark)) || typeof r.seq !== 'number') return undefined;
  if (r.op === 'put' && typeof r.book === 'object' && r.book !== null) {
    const b = r.book as Book;
    return { seq: r.seq, op: 'put', book: { id: b.id, title: b.title, author: b.author, year: b.year } };
  }
  if (r.op === 'del' && typeof r.id === 'number') return { seq: r.seq, op: 'del', id: r.id };
  return undefined;
}

class FileBookStore implements BookStore {
  readonly dir: string;
  readonly #handle: FileHandle;
  readonly #books: Map<number, Entry>;
  readonly #release: () => Promise<void>;
  readonly #logger: Logger;
  #nextId: number;
  #seq: number;
  #queue: Waiter[] = [];
  #flushing: Promise<void> | undefined;
  #listJson: string | undefined;
  #closed = false;

  constructor(dir: string, handle: FileHandle, state: ReplayState, release: () => Promise<void>, logger: Logger) {
    this.dir = dir;
    this.#handle = handle;
    this.#books = state.books;
    this.#nextId = state.nextId;
    this.#seq = state.seq;
    this.#release = release;
    this.#logger = logger;
  }

  get size(): number {
    return this.#books.size;
  }

  get(id: number): Book | undefined {
    return this.#books.get(id)?.book;
  }

  getJson(id: number): string | undefined {
    return this.#books.get(id)?.json;
  }

  /* Ids only grow and an update keeps its key's place, so the Map's order is ascending id. */
  list(): Book[] {
    return Array.from(this.#books.values(), (e) => e.book);
  }

  listJson(): string {
    this.#listJson ??= `[${Array.from(this.#books.values(), (e) => e.json).join(',')}]`;
    return this.#listJson;
  }

  create(fields: BookFields): Promise<Book> {
    return this.#enqueue({ kind: 'create', fields }) as Promise<Book>;
  }

  update(id: number, patch: BookPatch): Promise<Book | undefined> {
    return this.#enqueue({ kind: 'update', id, patch }) as Promise<Book | undefined>;
  }

  remove(id: number): Promise<boolean> {
    return this.#enqueue({ kind: 'delete', id }) as Promise<boolean>;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#flushing;
    await this.#handle.close();
    await this.#release();
  }

  #enqueue(op: Op): Promise<Book | boolean | undefined> {
    if (this.#closed) return Promise.reject(new StoreUnavailableError('store is closed'));
    return new Promise((resolve, reject) => {
      this.#queue.push({ op, resolve, reject });
      this.#flushing ??= this.#flushLoop();
    });
  }

  async #flushLoop(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      await this.#commit(batch);
    }
    this.#flushing = undefined;
  }

  /** Decides every change of the batch against committed state, writes them once, then applies. */
  async #commit(batch: Waiter[]): Promise<void> {
    const changes = new Map<number, Entry | null>();
    const results: (Book | boolean | undefined)[] = [];
    let nextId = this.#nextId;
    let seq = this.#seq;
    let text = '';
    const current = (id: number): Entry | undefined => {
      const changed = changes.get(id);
      return changed === null ? undefined : (changed ?? this.#books.get(id));
    };
    for (const { op } of batch) {
      if (op.kind === 'delete') {
        if (current(op.id) === undefined) {
          results.push(false);
          continue;
        }
        changes.set(op.id, null);
        text += encodeRecord(++seq, `"op":"del","id":${op.id}`);
        results.push(true);
        continue;
      }
      let book: Book;
      if (op.kind === 'create') {
        book = { id: nextId++, title: op.fields.title, author: op.fields.author, year: op.fields.year };
      } else {
        const prev = current(op.id)?.book;
        if (prev === undefined) {
          results.push(undefined);
          continue;
        }
        const p = op.patch;
        book = { id: prev.id, title: p.title ?? prev.title, author: p.author ?? prev.author, year: p.year ?? prev.year };
      }
      const json = bookJson(book);
      changes.set(book.id, { book, json });
      text += encodeRecord(++seq, `"op":"put","book":${json}`);
      results.push(book);
    }
    if (text !== '') {
      try {
        const bytes = Buffer.from(text, 'utf8');
        await this.#handle.write(bytes);
        await this.#handle.datasync();
      } catch (cause) {
        this.#logger.error('journal write failed; the changes were not applied', { err: cause as Error });
        const err = new StoreUnavailableError('journal write failed', { cause });
        for (const w of batch) w.reject(err);
        return;
      }
    }
    for (const [id, entry] of changes) {
      if (entry === null) this.#books.delete(id);
      else this.#books.set(id, entry);
    }
    if (changes.size > 0) this.#listJson = undefined;
    this.#nextId = nextId;
    this.#seq = seq;
    batch.forEach((w, i) => w.resolve(results[i]));
  }
}
