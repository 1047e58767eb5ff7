/** Ids per page: small enough that growing or dropping one page never stalls the event loop. */
const PAGE = 4096;

/**
 * Book id → the book's response JSON, iterated in ascending id order. A single Map would do, but
 * V8 rehashes a Map by copying every entry when it doubles: at 1M books that is a 100-300 ms pause
 * in one `set` (measured). Fixed-size pages keyed by `id / PAGE` keep every operation O(1) with no
 * large copy. Pages are created in ascending order because ids only grow, and a Map iterates in
 * insertion order, so iteration is ascending; it stays valid while entries change (Map iterators
 * survive concurrent modification), which the compactor relies on.
 */
export class BookIndex {
  readonly #pages = new Map<number, { live: number; slots: (string | undefined)[] }>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  get(id: number): string | undefined {
    return this.#pages.get(Math.floor(id / PAGE))?.slots[id % PAGE];
  }

  set(id: number, json: string): void {
    const key = Math.floor(id / PAGE);
    let page = this.#pages.get(key);
    if (page === undefined) {
      page = { live: 0, slots: new Array<string | undefined>(PAGE).fill(undefined) };
      this.#pages.set(key, page);
    }
    const slot = id % PAGE;
    if (page.slots[slot] === undefined) {
      page.live++;
      this.#size++;
    }
    page.slots[slot] = json;
  }

  delete(id: number): boolean {
    const key = Math.floor(id / PAGE);
    const page = this.#pages.get(key);
    const slot = id % PAGE;
    if (page === undefined || page.slots[slot] === undefined) return false;
    page.slots[slot] = undefined;
    this.#size--;
    if (--page.live === 0) this.#pages.delete(key);
    return true;
  }

  /** Every book's JSON in ascending id order, without a generator's per-item cost. */
  all(): string[] {
    const out: string[] = [];
    for (const page of this.#pages.values()) {
      for (const json of page.slots) if (json !== undefined) out.push(json);
    }
    return out;
  }

  *values(): IterableIterator<string> {
    for (const page of this.#pages.values()) {
      for (const json of page.slots) if (json !== undefined) yield json;
    }
  }
}
