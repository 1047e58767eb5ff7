import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Book } from '../src/model/book.ts';
import { cursorBefore, locate, MAX_LIMIT, MAX_REQUESTS, nextCursor, PAGE_SIZE, type FetchPage } from '../src/ui/page/keyset.ts';

/** GET /books?limit&after over `ids` (ascending), as the service pages it; counts the requests. */
function catalogue(ids: readonly number[]): { fetchPage: FetchPage; requests: () => number } {
  let requests = 0;
  const fetchPage: FetchPage = (after, limit) => {
    requests++;
    assert.ok(limit >= 1 && limit <= MAX_LIMIT, `limit ${limit} is one the service takes`);
    const books: Book[] = ids.filter((id) => id > after).slice(0, limit).map((id) => ({ id, title: `Book ${id}`, author: 'A', year: 2000 }));
    const last = books[books.length - 1];
    const more = last !== undefined && ids.some((id) => id > last.id);
    return Promise.resolve({ books, next: more ? last.id : undefined, total: ids.length });
  };
  return { fetchPage, requests: () => requests };
}

/**
 * The first book after `after`: every `after` from the last book before a page up to the id
 * before its first book gives the same page, so pages are compared by their first book.
 */
const samePage = (ids: readonly number[], after: number | undefined): number | undefined => (after === undefined ? undefined : ids.find((id) => id > after));

/** The `after` of every page, walking Next from the first: what "page n" means. */
function pageStarts(ids: readonly number[]): number[] {
  const starts = [0];
  for (let i = PAGE_SIZE; i < ids.length; i += PAGE_SIZE) starts.push(ids[i - 1] as number);
  return starts;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);

describe("the page's keyset paging (src/ui/page/keyset.ts)", () => {
  it('a new book, the 1,350th, is on page 14, which starts after id 1300, found in two requests', async () => {
    const { fetchPage, requests } = catalogue(range(1, 1350));
    assert.deepEqual(await locate(fetchPage, 1350), { after: 1300, pageNumber: 14 });
    assert.equal(requests(), 2, 'one to count the books from it on, one to find where its page starts');
  });

  it('the 1,301st, first on page 14, in one request', async () => {
    const { fetchPage, requests } = catalogue(range(1, 1301));
    assert.deepEqual(await locate(fetchPage, 1301), { after: 1300, pageNumber: 14 });
    assert.equal(requests(), 1);
  });

  it('every book of a catalogue with holes lands on the page Next would have reached, with its number', async () => {
    // Deleted books leave holes of every size, in places near page boundaries.
    const ids = range(1, 2600).filter((id) => id % 7 !== 0 && (id < 400 || id > 650) && id % 101 !== 3);
    const starts = pageStarts(ids);
    for (const [rank, id] of ids.entries()) {
      if (rank % 37 !== 0 && rank !== ids.length - 1) continue;
      const page = Math.floor(rank / PAGE_SIZE);
      const found = await locate(catalogue(ids).fetchPage, id);
      assert.equal(found?.pageNumber, page + 1, `book ${id} (rank ${rank}): its page's number`);
      assert.equal(samePage(ids, found.after), samePage(ids, starts[page]), `book ${id} (rank ${rank}): its page's first book`);
    }
  });

  it('a search whose matches are far apart still finds the page in a few requests', async () => {
    const ids = range(1, 200_000).filter((id) => id % 997 === 0);
    const starts = pageStarts(ids);
    const { fetchPage, requests } = catalogue(ids);
    const rank = 150;
    const found = await locate(fetchPage, ids[rank] as number);
    assert.equal(found?.pageNumber, 2);
    assert.equal(samePage(ids, found.after), samePage(ids, starts[1]));
    assert.ok(requests() <= MAX_REQUESTS, `${requests()} requests`);
  });

  it('a book the listing does not hold (deleted, or hidden by the search) is not located', async () => {
    assert.equal(await locate(catalogue([1, 2, 4]).fetchPage, 3), undefined);
  });

  it('a book with more books after it than the requests can count is shown on a page that starts with it, unnumbered', async () => {
    const ids = range(1, MAX_LIMIT * (MAX_REQUESTS + 1));
    const { fetchPage, requests } = catalogue(ids);
    assert.deepEqual(await locate(fetchPage, 5), { after: 4, pageNumber: undefined });
    assert.equal(requests(), MAX_REQUESTS);
  });

  it('the page before any page: exactly the 100 books before it, after deletes too', async () => {
    const ids = range(1, 5000).filter((id) => id % 3 !== 0 || id > 4000);
    const starts = pageStarts(ids);
    for (let page = 1; page < starts.length; page += 5) {
      const after = await cursorBefore(catalogue(ids).fetchPage, starts[page] as number, PAGE_SIZE);
      assert.equal(samePage(ids, after), samePage(ids, starts[page - 1]), `before page ${page + 1}`);
    }
  });

  it('fewer books before than asked: the first page (0)', async () => {
    assert.equal(await cursorBefore(catalogue([5, 9, 12]).fetchPage, 12, PAGE_SIZE), 0);
  });

  it("the next page's after comes from the Link header", () => {
    assert.equal(nextCursor('</books?limit=100&after=200&q=x>; rel="next"', 'http://h/'), 200);
    assert.equal(nextCursor(null, 'http://h/'), undefined);
  });
});
