import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp, type TestResponse } from './helpers/app.ts';
import { openConnection } from './helpers/raw.ts';
import { openEvents } from './helpers/sse-client.ts';

const DUNE = { title: 'Dune', author: 'Frank Herbert', year: 1965 };
const PRECONDITION_FAILED = { status: 412, message: 'Precondition failed', data: null };

/** A 304 as RFC 9110 §15.4.5 has it: no body, the ETag and Cache-Control a 200 would carry, no representation metadata. */
function assertNotModified(res: TestResponse, etag: string, what: string): void {
  assert.equal(res.status, 304, what);
  assert.equal(res.text, '', what);
  assert.equal(res.headers.get('etag'), etag, what);
  assert.equal(res.headers.get('cache-control'), 'no-store', what);
  assert.equal(res.headers.get('content-type'), null, what);
  assert.equal(res.headers.get('x-total-count'), null, what);
  assert.match(res.headers.get('x-request-id') ?? '', /./, what);
}

describe('conditional requests (RFC 9110 §13.2, docs/contract.md "Conditional requests")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  const create = async (): Promise<{ id: number; etag: string }> => {
    const res = await app.request('POST', '/book', { body: DUNE });
    assert.equal(res.status, 201);
    return { id: (res.json.data as { id: number }).id, etag: res.headers.get('etag') as string };
  };

  describe('GET and HEAD /book/{id}', () => {
    it('If-None-Match naming the current tag (as is, weak, in a list, or *) is 304 without a body; GET and HEAD alike', async () => {
      const { id, etag } = await create();
      for (const method of ['GET', 'HEAD']) {
        for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
          assertNotModified(await app.request(method, `/book/${id}`, { headers: { 'if-none-match': header } }), etag, `${method} ${header}`);
        }
      }
    });

    it('If-None-Match with a stale tag is 200 with the book', async () => {
      const { id, etag } = await create();
      await app.request('PUT', `/book/${id}`, { body: { year: 1966 } });
      const res = await app.request('GET', `/book/${id}`, { headers: { 'if-none-match': etag } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json.data, { id, ...DUNE, year: 1966 });
    });

    it('If-Match that fails is 412 on GET and HEAD; one that holds (the tag, or *) is 200', async () => {
      const { id, etag } = await create();
      const failed = await app.request('GET', `/book/${id}`, { headers: { 'if-match': '"stale"' } });
      assert.deepEqual(failed.json, PRECONDITION_FAILED);
      assert.equal((await app.request('HEAD', `/book/${id}`, { headers: { 'if-match': `W/${etag}` } })).status, 412, 'strong comparison: a weak tag never holds');
      assert.equal((await app.request('GET', `/book/${id}`, { headers: { 'if-match': etag } })).status, 200);
      assert.equal((await app.request('GET', `/book/${id}`, { headers: { 'if-match': '*' } })).status, 200);
    });

    it('If-Match is evaluated before If-None-Match (§13.2.2): failing If-Match is 412 even when If-None-Match matches', async () => {
      const { id, etag } = await create();
      const res = await app.request('GET', `/book/${id}`, { headers: { 'if-match': '"stale"', 'if-none-match': etag } });
      assert.equal(res.status, 412);
      const both = await app.request('GET', `/book/${id}`, { headers: { 'if-match': etag, 'if-none-match': etag } });
      assert.equal(both.status, 304);
    });

    it('preconditions are ignored when the answer would not be a success: an unknown id is 404, a bad one 400', async () => {
      assert.equal((await app.request('GET', '/book/999999', { headers: { 'if-match': '"x"', 'if-none-match': '*' } })).status, 404);
      assert.equal((await app.request('GET', '/book/abc', { headers: { 'if-none-match': '*' } })).status, 400);
    });

    it('If-Modified-Since and If-Unmodified-Since are ignored: no representation has a modification date', async () => {
      const { id } = await create();
      for (const name of ['if-modified-since', 'if-unmodified-since']) {
        const res = await app.request('GET', `/book/${id}`, { headers: { [name]: 'Thu, 01 Jan 1970 00:00:00 GMT' } });
        assert.equal(res.status, 200, name);
      }
    });

    it('a 304 on a keep-alive connection carries no body bytes: the next answer on it is whole', async () => {
      const { id, etag } = await create();
      const conn = await openConnection(app.port);
      try {
        const head = `Host: x\r\nAuthorization: ${app.token()}\r\n`;
        conn.write(`GET /book/${id} HTTP/1.1\r\n${head}If-None-Match: ${etag}\r\n\r\nGET /book/${id} HTTP/1.1\r\n${head}\r\n`);
        const first = await conn.response();
        assert.equal(first.status, 304);
        assert.equal(first.headers['content-length'], undefined);
        assert.equal(first.headers['transfer-encoding'], undefined);
        const second = await conn.response();
        assert.equal(second.status, 200);
        assert.deepEqual(second.json?.data, { id, ...DUNE });
      } finally {
        conn.destroy();
      }
    });
  });

  describe('PUT and DELETE /book/{id}', () => {
    it('PUT with If-None-Match: * on an existing book is 412 and the book is unchanged', async () => {
      const { id } = await create();
      const seq = app.store.feed.seq;
      const res = await app.request('PUT', `/book/${id}`, { body: { title: 'Overwritten' }, headers: { 'if-none-match': '*' } });
      assert.deepEqual(res.json, PRECONDITION_FAILED);
      assert.deepEqual((await app.request('GET', `/book/${id}`)).json.data, { id, ...DUNE });
      assert.equal(app.store.feed.seq, seq, 'no change was published');
    });

    it('PUT with If-None-Match naming the current tag is 412; naming a stale one, it writes', async () => {
      const { id, etag } = await create();
      assert.equal((await app.request('PUT', `/book/${id}`, { body: { year: 1 }, headers: { 'if-none-match': `W/${etag}` } })).status, 412);
      const res = await app.request('PUT', `/book/${id}`, { body: { year: 2 }, headers: { 'if-none-match': '"stale"' } });
      assert.equal(res.status, 200);
      assert.equal((res.json.data as { year: number }).year, 2);
    });

    it('DELETE with If-None-Match: * is 412 and the book stays', async () => {
      const { id } = await create();
      assert.deepEqual((await app.request('DELETE', `/book/${id}`, { headers: { 'if-none-match': '*' } })).json, PRECONDITION_FAILED);
      assert.equal((await app.request('GET', `/book/${id}`)).status, 200);
    });
  });

  describe('GET /books', () => {
    it('the whole list carries an ETag of the committed state: unchanged, a poll is 304; after a write, 200 with a new tag', async () => {
      await create();
      const first = await app.request('GET', '/books');
      const etag = first.headers.get('etag') as string;
      assert.match(etag, /^"[!#-~]+"$/, 'a strong tag');
      assert.equal((await app.request('GET', '/books')).headers.get('etag'), etag, 'the same state, the same tag');
      assertNotModified(await app.request('GET', '/books', { headers: { 'if-none-match': etag } }), etag, 'GET');
      assertNotModified(await app.request('HEAD', '/books', { headers: { 'if-none-match': etag } }), etag, 'HEAD');
      await create();
      const changed = await app.request('GET', '/books', { headers: { 'if-none-match': etag } });
      assert.equal(changed.status, 200);
      assert.notEqual(changed.headers.get('etag'), etag);
      assert.equal(changed.headers.get('etag'), (await app.request('GET', '/books')).headers.get('etag'));
    });

    it('a write that changes nothing keeps the tag: the poll stays 304', async () => {
      const { id } = await create();
      const etag = (await app.request('GET', '/books')).headers.get('etag') as string;
      assert.equal((await app.request('PUT', `/book/${id}`, { body: {} })).status, 200);
      assert.equal((await app.request('GET', '/books', { headers: { 'if-none-match': etag } })).status, 304);
    });

    it('a page (limit, after, q) has a tag of its own, per state and query, and answers 304 the same way', async () => {
      await create();
      await create();
      const tags = new Set<string>();
      for (const query of ['?limit=1', '?limit=2', '?limit=1&after=1', '?q=dune', '?q=herbert']) {
        const page = await app.request('GET', `/books${query}`);
        assert.equal(page.status, 200, query);
        const etag = page.headers.get('etag') as string;
        assert.match(etag, /^"[!#-~]+"$/, query);
        tags.add(etag);
        assertNotModified(await app.request('GET', `/books${query}`, { headers: { 'if-none-match': etag } }), etag, query);
      }
      assert.equal(tags.size, 5, 'each query names its own answer');
      assert.ok(!tags.has((await app.request('GET', '/books')).headers.get('etag') as string));
    });

    it('If-Match that fails is 412 on the list too', async () => {
      assert.deepEqual((await app.request('GET', '/books', { headers: { 'if-match': '"stale"' } })).json, PRECONDITION_FAILED);
      const etag = (await app.request('GET', '/books?limit=1')).headers.get('etag') as string;
      assert.equal((await app.request('GET', '/books?limit=1', { headers: { 'if-match': etag } })).status, 200);
    });
  });

  describe('every other read', () => {
    it('a route without an ETag still has a representation: If-Match other than * is 412, If-None-Match: * is 304', async () => {
      for (const path of ['/healthz', '/changes']) {
        assert.equal((await app.request('GET', path, { headers: { 'if-match': '"x"' } })).status, 412, path);
        assert.equal((await app.request('GET', path, { headers: { 'if-match': '*' } })).status, 200, path);
        const res = await app.request('GET', path, { headers: { 'if-none-match': '*' } });
        assert.equal(res.status, 304, path);
        assert.equal(res.headers.get('etag'), null, path);
        assert.equal((await app.request('GET', path, { headers: { 'if-none-match': '"x"' } })).status, 200, path);
      }
    });

    it('GET /events is a stream, not a representation: preconditions do not apply', async () => {
      const stream = await openEvents(`${app.url}/events`, { authorization: app.token(), 'if-none-match': '*', 'if-match': '"x"' });
      try {
        assert.equal(stream.status, 200);
      } finally {
        stream.close();
      }
    });

    it('POST /book has no representation to compare: its preconditions are ignored', async () => {
      const res = await app.request('POST', '/book', { body: DUNE, headers: { 'if-match': '"x"', 'if-none-match': '*' } });
      assert.equal(res.status, 201);
    });
  });
});

describe('GET /books tags name one history: a restored catalogue at the same seq is not taken for the old one', () => {
  it('an empty catalogue and one imported from an export (both at seq 0) have different tags', async () => {
    const empty = await startApp();
    const restored = await startApp({ catalogue: [{ id: 1, ...DUNE }] });
    try {
      const etag = (await empty.request('GET', '/books')).headers.get('etag') as string;
      assert.equal(empty.store.feed.seq, restored.store.feed.seq);
      const res = await restored.request('GET', '/books', { headers: { 'if-none-match': etag } });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json.data, [{ id: 1, ...DUNE }]);
    } finally {
      await Promise.all([empty.close(), restored.close()]);
    }
  });
});

describe('a 304 to a cross-origin request carries what the page needs to read it', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ corsOrigins: ['https://app.example.com'] });
  });
  after(() => app.close());

  it('Access-Control-Allow-Origin, the exposed headers and Vary: Origin', async () => {
    const headers = { origin: 'https://app.example.com' };
    const etag = (await app.request('GET', '/books', { headers })).headers.get('etag') as string;
    const res = await app.request('GET', '/books', { headers: { ...headers, 'if-none-match': etag } });
    assertNotModified(res, etag, 'cross-origin');
    assert.equal(res.headers.get('access-control-allow-origin'), 'https://app.example.com');
    assert.match(res.headers.get('access-control-expose-headers') ?? '', /\bETag\b/);
    assert.equal(res.headers.get('vary'), 'Origin');
  });
});
