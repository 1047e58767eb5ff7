import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BookEtags, bookEtag, ETAG_CACHE_BOOKS, ETAG_CACHE_MAX_JSON } from '../src/books/etag.ts';
import { startApp, type TestApp } from './helpers/app.ts';

const DUNE = { title: 'Dune', author: 'Frank Herbert', year: 1965 };
const PRECONDITION_FAILED = { status: 412, message: 'Precondition failed', data: null };

describe('conditional writes: ETag and If-Match (RFC 9110 §8.8.3, §13.1.1)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  /** Creates a book and returns its id and the ETag of the POST answer. */
  const create = async (): Promise<{ id: number; etag: string }> => {
    const res = await app.request('POST', '/book', { body: DUNE });
    assert.equal(res.status, 201);
    return { id: (res.json.data as { id: number }).id, etag: res.headers.get('etag') ?? '' };
  };

  it('POST, GET, HEAD and PUT answers carry a strong ETag for the book', async () => {
    const { id, etag } = await create();
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/, 'a strong tag: quoted, no W/ prefix');
    assert.equal((await app.request('GET', `/book/${id}`)).headers.get('etag'), etag);
    assert.equal((await app.request('HEAD', `/book/${id}`)).headers.get('etag'), etag);
    const put = await app.request('PUT', `/book/${id}`, { body: { year: 1966 } });
    const changed = put.headers.get('etag');
    assert.ok(changed !== null && changed !== etag, 'a changed book gets a different tag');
    assert.equal((await app.request('GET', `/book/${id}`)).headers.get('etag'), changed);
  });

  it('the same content gives the same ETag (a content hash, not a counter)', async () => {
    const { id, etag } = await create();
    await app.request('PUT', `/book/${id}`, { body: { year: 2000 } });
    const back = await app.request('PUT', `/book/${id}`, { body: { year: DUNE.year } });
    assert.equal(back.headers.get('etag'), etag);
  });

  it('PUT with the current ETag in If-Match updates the book', async () => {
    const { id, etag } = await create();
    const res = await app.request('PUT', `/book/${id}`, { body: { year: 1966 }, headers: { 'if-match': etag } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json.data, { id, ...DUNE, year: 1966 });
  });

  it('412 Precondition failed when PUT carries a stale ETag, and the book is unchanged', async () => {
    const { id, etag } = await create();
    await app.request('PUT', `/book/${id}`, { body: { title: 'Dune Messiah' } });
    const res = await app.request('PUT', `/book/${id}`, { body: { year: 1 }, headers: { 'if-match': etag } });
    assert.equal(res.status, 412);
    assert.deepEqual(res.json, PRECONDITION_FAILED);
    assert.deepEqual((await app.request('GET', `/book/${id}`)).json.data, { id, ...DUNE, title: 'Dune Messiah' });
  });

  it('412 Precondition failed when DELETE carries a stale ETag, and the book stays', async () => {
    const { id } = await create();
    const res = await app.request('DELETE', `/book/${id}`, { headers: { 'if-match': '"not-the-current-tag"' } });
    assert.deepEqual(res.json, PRECONDITION_FAILED);
    assert.equal((await app.request('GET', `/book/${id}`)).status, 200);
  });

  it('DELETE with the current ETag in If-Match deletes the book', async () => {
    const { id, etag } = await create();
    const res = await app.request('DELETE', `/book/${id}`, { headers: { 'if-match': etag } });
    assert.deepEqual(res.json, { status: 200, message: 'Book deleted successfully', data: null });
    assert.equal((await app.request('GET', `/book/${id}`)).status, 404);
  });

  const headerRows: { name: string; header: (etag: string) => string; status: number }[] = [
    { name: 'If-Match: * matches any existing book', header: () => '*', status: 200 },
    { name: 'a list of tags matches when one of them is current', header: (etag) => `"other", ${etag}`, status: 200 },
    { name: 'a weak tag never matches (strong comparison)', header: (etag) => `W/${etag}`, status: 412 },
    { name: 'an empty If-Match matches nothing', header: () => '', status: 412 },
  ];
  for (const row of headerRows) {
    it(`PUT: ${row.name} (${row.status})`, async () => {
      const { id, etag } = await create();
      const res = await app.request('PUT', `/book/${id}`, { body: { year: 1999 }, headers: { 'if-match': row.header(etag) } });
      assert.equal(res.status, row.status);
    });
  }

  it('404 Book not found, not 412, when the id names no book', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const res = await app.request(method, '/book/999999', { body: { year: 1 }, headers: { 'if-match': '"x"' } });
      assert.deepEqual(res.json, { status: 404, message: 'Book not found', data: null }, method);
    }
  });

  it('400 Invalid input comes before 412 when the body is bad', async () => {
    const { id } = await create();
    const res = await app.request('PUT', `/book/${id}`, { body: { year: 'soon' }, headers: { 'if-match': '"stale"' } });
    assert.equal(res.json.message, 'Invalid input');
  });

  it('of concurrent editors sending the same ETag, exactly one wins and the others get 412', async () => {
    const { id, etag } = await create();
    const editors = Array.from({ length: 8 }, (_, i) =>
      app.request('PUT', `/book/${id}`, { body: { title: `Edit ${i}` }, headers: { 'if-match': etag } }),
    );
    const answers = await Promise.all(editors);
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = answers.find((r) => r.status === 200);
    assert.deepEqual((await app.request('GET', `/book/${id}`)).json.data, winner?.json.data);
  });

  it('without If-Match, PUT and DELETE behave as before (no precondition)', async () => {
    const { id } = await create();
    await app.request('PUT', `/book/${id}`, { body: { year: 1970 } });
    assert.equal((await app.request('PUT', `/book/${id}`, { body: { year: 1971 } })).status, 200);
    assert.equal((await app.request('DELETE', `/book/${id}`)).status, 200);
  });
});

describe('BookEtags: the tags of books read lately', () => {
  const json = (id: number, title: string): string => `{"id":${id},"title":${JSON.stringify(title)},"author":"a","year":1}`;

  it('gives the tag of the JSON it is asked with, also when the book changed since it was last asked', () => {
    const etags = new BookEtags();
    for (const title of ['Dune', 'Dune Messiah', 'Dune', 'Dune \ud83d\ude00', 'Dune']) {
      assert.equal(etags.etag(7, json(7, title)), bookEtag(json(7, title)), title);
      assert.equal(etags.etag(7, json(7, title)), bookEtag(json(7, title)), `${title}, asked again`);
    }
  });

  it(`holds at most ${ETAG_CACHE_BOOKS} books, and none whose JSON is longer than ${ETAG_CACHE_MAX_JSON} characters`, () => {
    const etags = new BookEtags();
    for (let id = 1; id <= ETAG_CACHE_BOOKS + 10; id++) etags.etag(id, json(id, 'x'));
    assert.equal(etags.size, ETAG_CACHE_BOOKS);
    const long = new BookEtags();
    const text = json(1, 'y'.repeat(ETAG_CACHE_MAX_JSON));
    assert.equal(long.etag(1, text), bookEtag(text));
    assert.equal(long.size, 0);
  });
});
