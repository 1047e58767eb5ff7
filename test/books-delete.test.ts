import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';

describe('DELETE /book/{id} (docs/contract.md, "Books")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
    for (const title of ['one', 'two']) await app.request('POST', '/book', { body: { title, author: 'a', year: 1 } });
  });
  after(() => app.close());

  it('§4.6.1 404 Book not found when no book has that id', async () => {
    const res = await app.request('DELETE', '/book/99');
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null });
  });

  it('§4.6.2 200 Book deleted successfully, data null', async () => {
    const res = await app.request('DELETE', '/book/1');
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"status":200,"message":"Book deleted successfully","data":null}');
  });

  it('§4.6.2 a later GET of the same id answers 404 Book not found', async () => {
    const res = await app.request('GET', '/book/1');
    assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null });
  });

  it('deleting the same id twice: the second is 404 Book not found', async () => {
    assert.equal((await app.request('DELETE', '/book/2')).status, 200);
    assert.deepEqual((await app.request('DELETE', '/book/2')).json, { status: 404, message: 'Book not found', data: null });
  });

  it('the deleted books are gone from GET /books', async () => {
    assert.deepEqual((await app.request('GET', '/books')).json.data, []);
  });

  it('400 Invalid book id when {id} is not a number', async () => {
    assert.deepEqual((await app.request('DELETE', '/book/x1')).json, { status: 400, message: 'Invalid book id', data: null });
  });

  it('a DELETE with a body ignores the body', async () => {
    await app.request('POST', '/book', { body: { title: 'three', author: 'a', year: 1 } });
    const res = await app.request('DELETE', '/book/3', { rawBody: '{not json' });
    assert.equal(res.status, 200);
  });
});
