import type { Book } from '../../model/book.ts';

/**
 * Keyset pages of GET /books (`limit`, `after`, `q`): a page is named by the id it follows, so a
 * deep page costs the service what the first does, and paging stays exact while others add and
 * delete. Page n is the one Next reaches from the first page n − 1 times; "a book's page" is that
 * page, so that its number, Previous and Next are the ones paging would have given. The service
 * says how many books match (X-Total-Count) but pages only forward, so this module finds a page by
 * counting and by looking back a little, in a few requests instead of one per page between.
 * No DOM here: test/ui-keyset.test.ts runs it in Node against a catalogue in memory.
 */

/** Rows on a page: never more at once, whatever the catalogue's size, so the page never holds or draws more. */
export const PAGE_SIZE = 100;
/** The largest `limit` GET /books takes (docs/contract.md): looking around takes few requests. */
export const MAX_LIMIT = 1000;
/** Requests one look-up may make; past them a book is shown on a page that starts with it. */
export const MAX_REQUESTS = 8;

export interface Page {
  readonly books: readonly Book[];
  /** The next page's `after` (the Link header); undefined when no book follows. */
  readonly next: number | undefined;
  /** How many books match, on every page alike. */
  readonly total: number;
}

/** GET /books?limit&after[&q] for one search; rejects when the service does not answer a page. */
export type FetchPage = (after: number, limit: number) => Promise<Page>;

export interface Position {
  /** The `after` that starts the page. */
  readonly after: number;
  /** Its number from the first page; undefined when counting would take more than MAX_REQUESTS. */
  readonly pageNumber: number | undefined;
}

/** RFC 8288 `Link: <…>; rel="next"`: the next page's `after`, when more books follow. */
export function nextCursor(link: string | null, base: string): number | undefined {
  const match = link === null ? null : /<([^>]*)>\s*;\s*rel="?next"?/.exec(link);
  if (match === null) return undefined;
  const after = new URL(match[1] as string, base).searchParams.get('after');
  return after !== null && /^\d+$/.test(after) ? Number(after) : undefined;
}

export function pageCount(total: number, pageSize = PAGE_SIZE): number {
  return Math.max(1, Math.ceil(total / pageSize));
}

/**
 * The `after` such that exactly `count` listed books have ids in (after, bound]: the start of the
 * page whose first `count` books end at `bound`. 0 when fewer than `count` come before; undefined
 * when finding it would take more than `budget` requests. It looks back over a span of ids that
 * starts at `count` (ids are unique integers, so never fewer) and widens by the density it finds:
 * one request when no book was deleted there.
 */
export async function cursorBefore(fetchPage: FetchPage, bound: number, count: number, budget = MAX_REQUESTS): Promise<number | undefined> {
  if (count === 0) return bound;
  let span = count;
  let requests = 0;
  for (;;) {
    const low = Math.max(0, bound - span);
    // The ids in (low, bound], walked forward; only the last `count` and the one before them are kept.
    const tail: number[] = [];
    let seen = 0;
    let after: number | undefined = low;
    while (after !== undefined) {
      if (++requests > budget) return undefined;
      const page = await fetchPage(after, MAX_LIMIT);
      after = page.next;
      for (const { id } of page.books) {
        if (id > bound) {
          after = undefined;
          break;
        }
        seen++;
        tail.push(id);
        if (tail.length > count + 1) tail.shift();
      }
    }
    if (seen > count) return tail[0];
    if (seen === count || low === 0) return low;
    span = seen === 0 ? span * 8 : Math.max(span * 2, Math.ceil((span * count * 2) / seen));
  }
}

/**
 * Where book `id` is in this listing: the page that holds it and that page's number. undefined
 * when the listing does not hold it (the search hides it, or it was deleted). Three requests when
 * the book is among the last thousand and no book was deleted near it: one to count the books
 * from it on (the rest come before it), one to find where its page starts, and the page itself
 * (by the caller).
 */
export async function locate(fetchPage: FetchPage, id: number, pageSize = PAGE_SIZE): Promise<Position | undefined> {
  const first = await fetchPage(id - 1, MAX_LIMIT);
  if (first.books[0]?.id !== id) return undefined;
  const startsWithIt: Position = { after: id - 1, pageNumber: undefined };
  let fromIt = first.books.length;
  let requests = 1;
  for (let after = first.next; after !== undefined; ) {
    if (++requests > MAX_REQUESTS) return startsWithIt;
    const page = await fetchPage(after, MAX_LIMIT);
    fromIt += page.books.length;
    after = page.next;
  }
  const before = Math.max(0, first.total - fromIt);
  const start = await cursorBefore(fetchPage, id - 1, before % pageSize, MAX_REQUESTS - requests);
  if (start === undefined) return startsWithIt;
  return { after: start, pageNumber: start === 0 ? 1 : Math.floor(before / pageSize) + 1 };
}
