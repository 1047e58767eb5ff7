/** Ids per page: small enough that building or dropping one page never stalls the event loop. */
const PAGE = 4096;
/** A page repacks once this many of its books changed since it was packed. */
const REPACK_AT = PAGE / 4;
const ID_PREFIX = '{"id":';

/**
 * One page of ids. Most books live in `packed`, one string holding their JSON back to back, with
 * each slot's [start, end) in `starts`/`ends` (-1: no book): a million books are then a few
 * hundred strings and typed arrays for the garbage collector instead of a million strings, which
 * keeps its pauses short and startup fast. Books changed since packing sit in `changed`
 * (null: deleted); once enough have changed the page repacks.
 */
interface Page {
  packed: string;
  starts: Int32Array;
  ends: Int32Array;
  changed: (string | null | undefined)[] | undefined;
  changedCount: number;
  live: number;
}

/** Which page an id lives in: a snapshot loader hands `addPacked` one page's lines at a time. */
export function pageOf(id: number): number {
  return Math.floor(id / PAGE);
}

function emptyPage(): Page {
  return { packed: '', starts: new Int32Array(PAGE).fill(-1), ends: new Int32Array(PAGE), changed: undefined, changedCount: 0, live: 0 };
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

/**
 * Book id → the book's response JSON, iterated in ascending id order. Pages keyed by `id / PAGE`
 * in a Map: a single Map of books would rehash by copying every entry when it doubles, a
 * 100-300 ms pause at 1M books (measured). Pages are created in ascending order because ids only
 * grow, and a Map iterates in insertion order; its iterators survive concurrent changes, which
 * the compactor relies on.
 */
export class BookIndex {
  readonly #pages = new Map<number, Page>();
  #size = 0;

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
      page = emptyPage();
      this.#pages.set(key, page);
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
    if (--page.live === 0) this.#pages.delete(key);
    else this.#change(page, slot, null);
    return true;
  }

  /**
   * Adds books given as `bookJson` lines, each ending `\n` or `,\n`, all in one page and in
   * ascending id order (a snapshot's lines). The page must not exist yet.
   */
  addPacked(text: string): void {
    const page = emptyPage();
    let key: number | undefined;
    for (let start = 0; start < text.length; ) {
      const newline = text.indexOf('\n', start);
      const end = text.charCodeAt(newline - 1) === 44 ? newline - 1 : newline;
      const id = Number(text.slice(start + ID_PREFIX.length, text.indexOf(',', start + ID_PREFIX.length)));
      key ??= pageOf(id);
      page.starts[id % PAGE] = start;
      page.ends[id % PAGE] = end;
      page.live++;
      start = newline + 1;
    }
    if (key === undefined) return;
    page.packed = text;
    this.#pages.set(key, page);
    this.#size += page.live;
  }

  #change(page: Page, slot: number, json: string | null): void {
    page.changed ??= new Array<string | null | undefined>(PAGE).fill(undefined);
    if (page.changed[slot] === undefined) page.changedCount++;
    page.changed[slot] = json;
    if (page.changedCount >= REPACK_AT) repack(page);
  }

  /** Every book's JSON in ascending id order, without a generator's per-item cost. */
  all(): string[] {
    const out: string[] = [];
    for (const page of this.#pages.values()) {
      for (let slot = 0; slot < PAGE; slot++) {
        const json = read(page, slot);
        if (json !== undefined) out.push(json);
      }
    }
    return out;
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

/** Folds a page's changes into a fresh packed string: O(page), once per REPACK_AT changes. */
function repack(page: Page): void {
  const parts: string[] = [];
  let offset = 0;
  for (let slot = 0; slot < PAGE; slot++) {
    const json = read(page, slot);
    if (json === undefined) {
      page.starts[slot] = -1;
      continue;
    }
    parts.push(json);
    page.starts[slot] = offset;
    offset += json.length;
    page.ends[slot] = offset;
  }
  page.packed = parts.join('');
  page.changed = undefined;
  page.changedCount = 0;
}
