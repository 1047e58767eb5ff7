import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { search } from '../src/books/search.ts';
import { bookJson } from '../src/model/book.ts';
import { BookIndex } from '../src/store/book-index.ts';
import { countTurns } from './helpers/event-loop.ts';

function index(count: number): BookIndex {
  const books = new BookIndex();
  for (let id = 1; id <= count; id++) books.set(id, bookJson({ id, title: `Title ${id} the end`, author: 'Someone', year: 2000 }));
  return books;
}

describe('search scans in slices', () => {
  it('lets the event loop run while it scans, and finds every match of one state', async () => {
    const books = index(100_000);
    const snapshot = books.snapshot();
    const stopCounting = countTurns();
    const searching = search(snapshot, { q: 'E', after: 0, limit: 3, abandoned: () => false });
    // A change committed while the scan runs is not in what it scans.
    books.delete(2);
    const found = await searching;
    const turns = stopCounting();
    assert.ok(turns > 1, `other callbacks ran ${turns} times during the scan`);
    assert.equal(found?.total, 100_000);
    assert.deepEqual(found?.books.map((b) => (JSON.parse(b) as { id: number }).id), [1, 2, 3]);
    assert.equal(found?.more, true);
  });

  it('stops when the client has gone', async () => {
    const found = await search(index(100_000).snapshot(), { q: 'e', after: 0, limit: 10, abandoned: () => true });
    assert.equal(found, undefined);
  });
});
