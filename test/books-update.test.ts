import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { openConnection } from './helpers/raw.ts';

const ORIGINAL = { title: 'Dune', author: 'Frank Herbert', year: 1965 };

describe('PUT /book/{id} (docs/contract.md, "Books")', () => {
  let app: TestApp;
  let id: number;
  before(async () => {
    app = await startApp();
  });
  beforeEach(async () => {
    id = ((await app.request('POST', '/book', { body: ORIGINAL })).json.data as { id: number }).id;
  });
  after(() => app.close());

  it('§4.5.1 404 Book not found when no book has that id', async () => {
    const res = await app.request('PUT', '/book/999', { body: { title: 'x' } });
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null });
  });

  it('§4.5.1 the look-up happens before the body is read: an unknown id with a malformed body is 404', async () => {
    const res = await app.request('PUT', '/book/999', { rawBody: '{not json' });
    assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null });
  });

  it('§4.5.1 the look-up happens before the body is read: 404 arrives while the body is still unsent', async () => {
    const conn = await openConnection(app.port);
    try {
      conn.write(`PUT /book/999 HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Length: 1000\r\n\r\n`);
      const res = await conn.response();
      assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null });
    } finally {
      conn.destroy();
    }
  });

  it('§4.5.1 an unknown id with a body over 64 KiB is 404, not 413', async () => {
    const res = await app.request('PUT', '/book/999', { rawBody: `{"title":"${'x'.repeat(70_000)}"}` });
    assert.equal(res.status, 404);
  });

  it('§4.5.2 a field absent from the body keeps its current value', async () => {
    const res = await app.request('PUT', `/book/${id}`, { body: { year: 1966 } });
    assert.deepEqual(res.json.data, { id, ...ORIGINAL, year: 1966 });
  });

  it('§4.5.2 400 Invalid input when the body cannot be parsed, and the book is unchanged', async () => {
    const res = await app.request('PUT', `/book/${id}`, { rawBody: '{"title":' });
    assert.deepEqual(res.json, { status: 400, message: 'Invalid input', data: null });
    assert.deepEqual((await app.request('GET', `/book/${id}`)).json.data, { id, ...ORIGINAL });
  });

  it('§4.5.3 200 Book updated successfully, data = the updated Book', async () => {
    const res = await app.request('PUT', `/book/${id}`, { body: { title: 'Dune Messiah', author: 'F. Herbert', year: 1969 } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      status: 200,
      message: 'Book updated successfully',
      data: { id, title: 'Dune Messiah', author: 'F. Herbert', year: 1969 },
    });
  });

  it('§4.5.3 the record is saved: a later GET and GET /books show the update', async () => {
    await app.request('PUT', `/book/${id}`, { body: { author: 'Someone Else' } });
    const expected = { id, ...ORIGINAL, author: 'Someone Else' };
    assert.deepEqual((await app.request('GET', `/book/${id}`)).json.data, expected);
    const list = (await app.request('GET', '/books')).json.data as { id: number }[];
    assert.deepEqual(
      list.find((b) => b.id === id),
      expected,
    );
  });

  it('{} is a valid no-op update: 200 with the book unchanged', async () => {
    const res = await app.request('PUT', `/book/${id}`, { body: {} });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json.data, { id, ...ORIGINAL });
  });

  it('a PUT that changes nothing ({} or the stored values) writes nothing and publishes no change: 200, the book, the same ETag', async () => {
    const before = await app.request('GET', `/book/${id}`);
    const { records, journalBytes } = app.store.stats;
    const seq = app.store.feed.seq;
    for (const body of [{}, ORIGINAL, { year: 1965.0 }, { title: ORIGINAL.title, id: id + 1, unknown: 'ignored' }]) {
      const res = await app.request('PUT', `/book/${id}`, { body });
      assert.equal(res.status, 200, JSON.stringify(body));
      assert.deepEqual(res.json, { status: 200, message: 'Book updated successfully', data: { id, ...ORIGINAL } });
      assert.equal(res.headers.get('etag'), before.headers.get('etag'), JSON.stringify(body));
    }
    assert.deepEqual([app.store.stats.records, app.store.stats.journalBytes, app.store.feed.seq], [records, journalBytes, seq], 'no journal record, no change');
    assert.deepEqual((await app.request('GET', `/changes?since=${seq}`)).json.data, []);
    assert.equal((await app.request('PUT', `/book/${id}`, { body: { year: 1966 } })).status, 200);
    assert.equal(app.store.feed.seq, seq + 1, 'a real change is still published');
  });

  it('an id in the body is ignored: the path names the book', async () => {
    const res = await app.request('PUT', `/book/${id}`, { body: { id: id + 100, title: 'Renamed' } });
    assert.deepEqual(res.json.data, { id, ...ORIGINAL, title: 'Renamed' });
    assert.equal((await app.request('GET', `/book/${id + 100}`)).status, 404);
  });

  it('a deleted book cannot be updated: 404', async () => {
    await app.request('DELETE', `/book/${id}`);
    assert.equal((await app.request('PUT', `/book/${id}`, { body: { title: 'x' } })).status, 404);
  });
});
