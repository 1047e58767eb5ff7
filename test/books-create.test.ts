import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ioError, recordingFs } from './helpers/recording-fs.ts';
import { startApp, type TestApp } from './helpers/app.ts';

describe('POST /book (docs/contract.md, "Books")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('§4.2.1 400 Invalid input when the body cannot be parsed into a Book, and nothing is stored', async () => {
    const res = await app.request('POST', '/book', { rawBody: '{"title":"Dune",' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, { status: 400, message: 'Invalid input', data: null });
    assert.deepEqual((await app.request('GET', '/books')).json.data, []);
  });

  it('§4.2.2 201 Book created successfully, data = the stored Book with its assigned id', async () => {
    const res = await app.request('POST', '/book', { body: { title: 'Dune', author: 'Frank Herbert', year: 1965 } });
    assert.equal(res.status, 201);
    assert.deepEqual(res.json, {
      status: 201,
      message: 'Book created successfully',
      data: { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 },
    });
  });

  it('201 Created carries Location, the new book\'s path, and following it reads the book (RFC 9110 §15.3.2)', async () => {
    const created = await app.request('POST', '/book', { body: { title: 'Persuasion', author: 'Jane Austen', year: 1817 } });
    const id = (created.json.data as { id: number }).id;
    const location = created.headers.get('location');
    assert.equal(location, `/book/${id}`);
    const read = await app.request('GET', location as string);
    assert.deepEqual(read.json.data, created.json.data);
    assert.equal(read.headers.get('etag'), created.headers.get('etag'));
  });

  it('the created book is stored: GET /book/{id} returns the same Book', async () => {
    const created = await app.request('POST', '/book', { body: { title: 'Emma', author: 'Jane Austen', year: 1815 } });
    const id = (created.json.data as { id: number }).id;
    const read = await app.request('GET', `/book/${id}`);
    assert.deepEqual(read.json.data, created.json.data);
  });

  it('ids are assigned 1, 2, 3, … in creation order; a refused create uses no id', async () => {
    // Each refused create reaches the store: the one after each success fails at its fdatasync, so
    // the store has given it an id and must take it back (the journal is cut back, nextId too).
    const rec = recordingFs();
    let failNext = false;
    rec.hooks.datasync = (file) => {
      if (failNext && file.startsWith('journal')) {
        failNext = false;
        throw ioError('EIO');
      }
    };
    const fresh = await startApp({ storeOptions: { fs: rec.fs } });
    try {
      const ids: number[] = [];
      for (const title of ['a', 'b', 'c']) {
        const res = await fresh.request('POST', '/book', { body: { title, author: 'x', year: 2000 } });
        ids.push((res.json.data as { id: number }).id);
        await fresh.request('POST', '/book', { body: { title, author: 'x', year: 'nope' } });
        failNext = true;
        const refused = await fresh.request('POST', '/book', { body: { title: `${title} again`, author: 'x', year: 2000 } });
        assert.equal(refused.status, 500, 'the store refused it');
        assert.equal(failNext, false, 'the refused create reached the fdatasync');
      }
      assert.deepEqual(ids, [1, 2, 3]);
      const later = await fresh.request('POST', '/book', { body: { title: 'd', author: 'x', year: 2000 } });
      assert.equal((later.json.data as { id: number }).id, 4);
    } finally {
      await fresh.close();
    }
  });

  it('ids are never reused after a delete', async () => {
    const fresh = await startApp();
    try {
      const post = async (): Promise<number> =>
        ((await fresh.request('POST', '/book', { body: { title: 't', author: 'a', year: 1 } })).json.data as { id: number }).id;
      assert.equal(await post(), 1);
      assert.equal(await post(), 2);
      assert.equal((await fresh.request('DELETE', '/book/2')).status, 200);
      assert.equal((await fresh.request('DELETE', '/book/1')).status, 200);
      assert.equal(await post(), 3);
    } finally {
      await fresh.close();
    }
  });

  it('concurrent creates get distinct consecutive ids', async () => {
    const fresh = await startApp();
    try {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => fresh.request('POST', '/book', { body: { title: `t${i}`, author: 'a', year: i } })),
      );
      const ids = results.map((r) => (r.json.data as { id: number }).id).sort((a, b) => a - b);
      assert.deepEqual(ids, Array.from({ length: 20 }, (_, i) => i + 1));
    } finally {
      await fresh.close();
    }
  });
});
