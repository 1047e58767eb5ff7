import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';

describe('GET /books (docs/contract.md, "Endpoints")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('200 Books retrieved successfully with data [] (never null) when no book exists', async () => {
    const res = await app.request('GET', '/books');
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"status":200,"message":"Books retrieved successfully","data":[]}');
  });

  it('data is an array with every stored Book in ascending id order', async () => {
    const books = [];
    for (const [title, year] of [['c', 3], ['a', 1], ['b', 2]] as const) {
      books.push((await app.request('POST', '/book', { body: { title, author: 'x', year } })).json.data);
    }
    const res = await app.request('GET', '/books');
    assert.equal(res.json.message, 'Books retrieved successfully');
    assert.deepEqual(res.json.data, books);
  });

  it('an updated book keeps its place and a deleted one leaves the list', async () => {
    await app.request('PUT', '/book/1', { body: { title: 'zzz' } });
    await app.request('DELETE', '/book/2');
    const ids = (await app.request('GET', '/books')).json.data as { id: number; title: string }[];
    assert.deepEqual(
      ids.map((b) => [b.id, b.title]),
      [
        [1, 'zzz'],
        [3, 'b'],
      ],
    );
  });

  it('a list right after each write shows it: the answer kept for the last state is not sent once a write has changed it', async () => {
    const listed = async (): Promise<unknown[]> => (await app.request('GET', '/books')).json.data as unknown[];
    const created = (await app.request('POST', '/book', { body: { title: 'new', author: 'x', year: 5 } })).json.data as { id: number };
    assert.deepEqual((await listed()).at(-1), created);
    assert.deepEqual((await listed()).at(-1), created, 'asked again with no write between');
    await app.request('PUT', `/book/${created.id}`, { body: { year: 6 } });
    assert.deepEqual((await listed()).at(-1), { ...created, year: 6 });
    await app.request('DELETE', `/book/${created.id}`);
    assert.ok(!(await listed()).some((book) => (book as { id: number }).id === created.id));
  });

  it('unknown query parameters are ignored: GET /books?x=1 equals GET /books (limit, after and q: list-pages.test.ts)', async () => {
    const plain = await app.request('GET', '/books');
    for (const query of ['?x=1', '?page=2&per_page=1', '?sort=title', '?', '?x=1&x=2', '?LIMIT=0']) {
      const res = await app.request('GET', `/books${query}`);
      assert.equal(res.text, plain.text, query);
    }
  });
});

describe('GET /book/{id} (docs/contract.md, "Paths and ids")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
    await app.request('POST', '/book', { body: { title: 'Dune', author: 'Frank Herbert', year: 1965 } });
  });
  after(() => app.close());

  it('§4.4.1 404 Book not found when no book has that id', async () => {
    const res = await app.request('GET', '/book/2');
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null });
  });

  it('§4.4.2 200 Book retrieved successfully, data = the Book', async () => {
    const res = await app.request('GET', '/book/1');
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      status: 200,
      message: 'Book retrieved successfully',
      data: { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 },
    });
  });

  it('a query string is ignored: GET /book/1?x=1 equals GET /book/1', async () => {
    assert.equal((await app.request('GET', '/book/1?x=1')).text, (await app.request('GET', '/book/1')).text);
  });

  it('400 Invalid book id when {id} is not a number', async () => {
    const res = await app.request('GET', '/book/abc');
    assert.deepEqual(res.json, { status: 400, message: 'Invalid book id', data: null });
  });
});
