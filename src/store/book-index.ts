import { BOOK_KEYS } from '../model/book.ts';
import { ListReaders, ListText, type DeflatedText, type PageWalk, type WalkAccount } from './list-readers.ts';

/**
 * Ids per page. A list's snapshot rebuilds every page changed since the last one (measured at 1M
 * books: ~0.25 ms a page at 1024 ids, ~1 ms at 4096), and a list being sent keeps its own copy of
 * each page changed meanwhile: both grow with the page, so a page is small, yet large enough that
 * 5M books are a few thousand pages for the garbage collector.
 */
export const PAGE = 1024;
/** A page repacks once this many of its books changed since it was packed. */
const REPACK_AT = PAGE / 4;

/**
 * One page of ids. Most books live in `packed`: their JSON joined by commas, exactly as it appears
 * inside GET /books, with each slot's [start, end) in `starts`/`ends` (-1: no book). A million
 * books are then a few hundred strings and typed arrays for the garbage collector instead of a
 * million strings (short GC pauses, fast startup), and the list JSON of an unchanged page is
 * `packed` itself. Books changed since packing sit in `changed` (null: deleted); once enough have
 * changed the page repacks.
 */
interface Page {
  readonly key: number;
  packed: string;
  starts: Int32Array;
  ends: Int32Array;
  changed: (string | null | undefined)[] | undefined;
  changedCount: number;
  live: number;
  /**
   * `packed` with its UTF-8 size once a list asked for it (see pageText). Until the page repacks
   * it is the same string as `packed`, changes or not; after, only the lists holding it keep it.
   */
  text: ListText | undefined;
}

/**
 * One page's books exactly as they appear inside GET /books, and that text's UTF-8 length. Never
 * changed once made (a change makes a new one), so a list being sent can hold the ones of the
 * state it started from while writes go on: copy-on-write at page granularity. What such lists
 * keep of the texts writes have superseded is counted against the memory budget (ListReaders).
 */
export interface PageText {
  readonly text: string;
  readonly bytes: number;
  /** The index no longer holds it: a change replaced it, and only the lists holding it keep it. */
  readonly superseded: boolean;
  /** Its gzip form so far (books/compressed-list-body.ts), filled in only while it is not superseded. */
  deflated: DeflatedText | undefined;
}

/** The pages of one committed state, in ascending id order: what a list or a search walks. */
export interface ListSnapshot {
  readonly pages: readonly PageText[];
  /** Books in the snapshot. */
  readonly count: number;
  /** UTF-8 length of `[…]`: the pages, the commas between them and the brackets. */
  readonly bytes: number;
  /**
   * Starts a pass over `pages` in order that tells it each page it is done with (`passed`) and
   * when it ends (`close`): what it still has ahead is counted while writes supersede it
   * (ListReaders). Whatever holds a snapshot over event-loop turns walks it.
   */
  walk(account: WalkAccount): PageWalk;
}

/** Which page an id lives in: a snapshot loader hands `addPacked` one page's lines at a time. */
export function pageOf(id: number): number {
  return Math.floor(id / PAGE);
}

function emptyPage(key: number): Page {
  return { key, packed: '', starts: new Int32Array(PAGE).fill(-1), ends: new Int32Array(PAGE), changed: undefined, changedCount: 0, live: 0, text: undefined };
}

function has(page: Page, slot: number): boolean {
  const changed = page.changed?.[slot];
  return changed === undefined ? page.starts[slot] !== -1 : changed !== null;
}

function read(page: Page, slot: number): string | undefined {
  const changed = page.changed?.[slot];
  if (changed !== undefined) return changed ?? undefined;
  const start = page.starts[slot] as number;
  return start === -1 ? undefined : page.packed.slice(start, page.ends[slot]);
}

function pageBooks(page: Page): string[] {
  const out: string[] = [];
  for (let slot = 0; slot < PAGE; slot++) {
    const json = read(page, slot);
    if (json !== undefined) out.push(json);
  }
  return out;
}

/**
 * The page's list text, which is `packed` itself: a changed page repacks first, at the cost of
 * joining its books that the text needs anyway, so it never holds its books twice (packed and
 * text) and a catalogue written all over stays one copy of its JSON.
 */
function pageText(page: Page, readers: ListReaders): ListText {
  if (page.changed !== undefined) repack(page, readers);
  page.text ??= new ListText(page.packed, Buffer.byteLength(page.packed), page.key);
  return page.text;
}

/** The decimal digits at `from`, up to the comma after a book's id. */
export function idAt(text: string, from: number): number {
  let id = 0;
  for (let i = from, c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) id = id * 10 + (c - 48);
  return id;
}

/**
 * Makes `books` (slot, JSON; ascending slots) the page's packed text: O(page). The list text of
 * the packed text it replaces is then superseded: memory only the lists holding it keep.
 */
function pack(page: Page, books: [number, string][], readers: ListReaders): void {
  if (page.text !== undefined) {
    readers.supersede(page.text);
    page.text = undefined;
  }
  page.starts.fill(-1);
  let offset = 0;
  for (const [slot, json] of books) {
    page.starts[slot] = offset;
    page.ends[slot] = offset + json.length;
    offset += json.length + 1;
  }
  page.packed = books.map(([, json]) => json).join(',');
  page.changed = undefined;
  page.changedCount = 0;
}

function repack(page: Page, readers: ListReaders): void {
  const books: [number, string][] = [];
  for (let slot = 0; slot < PAGE; slot++) {
    const json = read(page, slot);
    if (json !== undefined) books.push([slot, json]);
  }
  pack(page, books, readers);
}

/** The index in ascending `keys` of the first key at or after `key` (`keys.length` when none is). */
function firstAtOrAfter(keys: readonly number[], key: number): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((keys[mid] as number) < key) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * Book id → the book's response JSON, iterated in ascending id order. Pages keyed by `id / PAGE`
 * in a Map: a single Map of books would rehash by copying every entry when it doubles, a
 * 100-300 ms pause at 1M books (measured). Pages are created in ascending order because ids only
 * grow, and a Map iterates in insertion order; its iterators survive concurrent changes, which
 * the compactor relies on.
 */
export class BookIndex {
  readonly #pages = new Map<number, Page>();
  /** Pages whose list text a change dropped, oldest first: what the next snapshot would rebuild. */
  readonly #stale = new Set<Page>();
  /** The walks over its snapshots, told of every list text the index lets go while they may hold it. */
  readonly #readers = new ListReaders();
  #size = 0;
  /**
   * The keys of the pages there are, ascending: a keyset page starts at the first key at or after
   * its cursor's by binary search, so ids far apart (an import may hold ids up to 2^53 − 2) cost
   * nothing to skip, where walking every key between them would not end.
   */
  readonly #keys: number[] = [];

  get size(): number {
    return this.#size;
  }

  get(id: number): string | undefined {
    const page = this.#pages.get(pageOf(id));
    return page === undefined ? undefined : read(page, id % PAGE);
  }

  set(id: number, json: string): void {
    const key = pageOf(id);
    let page = this.#pages.get(key);
    if (page === undefined) {
      page = emptyPage(key);
      this.#pages.set(key, page);
      this.#keys.splice(firstAtOrAfter(this.#keys, key), 0, key);
    }
    const slot = id % PAGE;
    if (!has(page, slot)) {
      page.live++;
      this.#size++;
    }
    this.#change(page, slot, json);
  }

  delete(id: number): boolean {
    const key = pageOf(id);
    const page = this.#pages.get(key);
    const slot = id % PAGE;
    if (page === undefined || !has(page, slot)) return false;
    this.#size--;
    if (--page.live === 0) {
      this.#pages.delete(key);
      this.#keys.splice(firstAtOrAfter(this.#keys, key), 1);
      this.#stale.delete(page);
      if (page.text !== undefined) this.#readers.supersede(page.text);
    } else {
      this.#change(page, slot, null);
    }
    return true;
  }

  /**
   * Adds books given as `bookJson` lines, each ending `\n` or `,\n`, all in one page and in
   * ascending id order (a snapshot's lines), with `text`'s UTF-8 length, which the file's offsets
   * give: the first list after startup then needs no pass over every page to measure it. The page
   * must not exist yet.
   */
  addPacked(text: string, bytes: number): void {
    const key = pageOf(idAt(text, BOOK_KEYS.id.length));
    const page = emptyPage(key);
    // Line i loses i newlines before it once ",\n" becomes ",": its offsets shift by i.
    for (let start = 0, line = 0; start < text.length; line++) {
      const newline = text.indexOf('\n', start);
      const end = text.charCodeAt(newline - 1) === 44 ? newline - 1 : newline;
      const id = idAt(text, start + BOOK_KEYS.id.length);
      page.starts[id % PAGE] = start - line;
      page.ends[id % PAGE] = end - line;
      page.live++;
      start = newline + 1;
    }
    if (page.live === 0) return;
    page.packed = text.replaceAll(',\n', ',').slice(0, -1);
    // What packing dropped is newlines and commas: one byte each.
    page.text = new ListText(page.packed, bytes - (text.length - page.packed.length), key);
    this.#pages.set(key, page);
    this.#keys.splice(firstAtOrAfter(this.#keys, key), 0, key);
    this.#size += page.live;
  }

  #change(page: Page, slot: number, json: string | null): void {
    page.changed ??= new Array<string | null | undefined>(PAGE).fill(undefined);
    if (page.changed[slot] === undefined) page.changedCount++;
    page.changed[slot] = json;
    this.#stale.add(page);
    if (page.changedCount >= REPACK_AT) repack(page, this.#readers);
  }

  /**
   * Builds the list text of changed pages, oldest change first, until `performance.now()` passes
   * `until` (at least one page per call); returns how many are still to build. A list spreads this
   * over event-loop turns (FileBookStore.listSnapshot): after writes all over a large catalogue,
   * `snapshot()` alone would rebuild every changed page in one turn (~0.25 ms each, so ~0.25 s at
   * 1M books and more at 5M) while other requests wait.
   */
  buildListTexts(until: number): number {
    for (const page of this.#stale) {
      pageText(page, this.#readers);
      this.#stale.delete(page);
      if (performance.now() >= until) break;
    }
    return this.#stale.size;
  }

  /** Every book's JSON in ascending id order. */
  all(): string[] {
    return Array.from(this.#pages.values(), pageBooks).flat();
  }

  /**
   * The current state as page texts: O(pages), plus rebuilding the text of pages changed since
   * the last snapshot. Later changes never alter what it holds.
   */
  snapshot(): ListSnapshot {
    const readers = this.#readers;
    const pages = Array.from(this.#pages.values(), (page) => pageText(page, readers));
    this.#stale.clear();
    let bytes = 2 + Math.max(0, pages.length - 1);
    for (const page of pages) bytes += page.bytes;
    return { pages, count: this.#size, bytes, walk: (account) => readers.open(pages, bytes, account) };
  }

  /**
   * Up to `limit` books with ids above `after`, ascending, and whether more follow: a keyset page
   * whose cost depends on `limit` (and on the empty slots of the pages it reads), never on how deep
   * `after` is nor on how far apart the ids are.
   */
  booksAfter(after: number, limit: number): { books: string[]; more: boolean } {
    const books: string[] = [];
    const first = after + 1;
    const keys = this.#keys;
    for (let i = firstAtOrAfter(keys, pageOf(first)); i < keys.length; i++) {
      const key = keys[i] as number;
      const page = this.#pages.get(key) as Page;
      for (let slot = key === pageOf(first) ? first % PAGE : 0; slot < PAGE; slot++) {
        const json = read(page, slot);
        if (json === undefined) continue;
        if (books.length === limit) return { books, more: true };
        books.push(json);
      }
    }
    return { books, more: false };
  }

  *values(): IterableIterator<string> {
    for (const page of this.#pages.values()) {
      for (let slot = 0; slot < PAGE; slot++) {
        const json = read(page, slot);
        if (json !== undefined) yield json;
      }
    }
  }
}
