import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';

describe('smoke: the README walk-through over real HTTP', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('creates, lists, reads, updates and deletes a book', async () => {
    const created = await app.request('POST', '/book', { body: { title: 'Dune', author: 'Frank Herbert', year: 1965 } });
    assert.equal(created.status, 201);
    assert.deepEqual(created.json, { status: 201, message: 'Book created successfully', data: { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 } });
    assert.deepEqual((await app.request('GET', '/books')).json.data, [created.json.data]);
    assert.equal((await app.request('GET', '/book/1')).json.message, 'Book retrieved successfully');
    const updated = await app.request('PUT', '/book/1', { body: { year: 1966 } });
    assert.deepEqual(updated.json.data, { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1966 });
    assert.deepEqual((await app.request('DELETE', '/book/1')).json, { status: 200, message: 'Book deleted successfully', data: null });
    assert.equal((await app.request('GET', '/book/1')).status, 404);
  });
});
