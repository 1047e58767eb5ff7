import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { openConnection, rawRequest } from './helpers/raw.ts';

const NOT_FOUND = { status: 404, message: 'Not found', data: null };
const NOT_ALLOWED = { status: 405, message: 'Method not allowed', data: null };
const BAD_ID = { status: 400, message: 'Invalid book id', data: null };

describe('routing (docs/contract.md, "Paths and ids" and "Order of checks")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
    for (let i = 0; i < 7; i++) await app.request('POST', '/book', { body: { title: `book ${i + 1}`, author: 'a', year: 2000 } });
  });
  after(() => app.close());

  describe('404 Not found for an unknown path, with or without a token', () => {
    const paths = ['/', '/nope', '/books/1', '/book/1/x', '/BOOKS', '/book//1', '/books//', '/token/x', '/healthz/x', '//books'];
    for (const path of paths) {
      for (const auth of [true, false]) {
        it(`404 Not found for GET ${path} ${auth ? 'with' : 'without'} a token`, async () => {
          const res = await app.request('GET', path, { auth });
          assert.equal(res.status, 404);
          assert.deepEqual(res.json, NOT_FOUND);
        });
      }
    }
    it('404 Not found for POST to an unknown path', async () => {
      assert.deepEqual((await app.request('POST', '/nothing/here', { auth: false, rawBody: '{}' })).json, NOT_FOUND);
    });
  });

  describe('405 Method not allowed with an Allow header (sorted, HEAD where GET is), no token needed', () => {
    const rows: { method: string; path: string; allow: string }[] = [
      { method: 'DELETE', path: '/books', allow: 'GET, HEAD' },
      { method: 'POST', path: '/books', allow: 'GET, HEAD' },
      { method: 'GET', path: '/book', allow: 'POST' },
      { method: 'PUT', path: '/book', allow: 'POST' },
      { method: 'POST', path: '/book/1', allow: 'DELETE, GET, HEAD, PUT' },
      { method: 'PATCH', path: '/book/1', allow: 'DELETE, GET, HEAD, PUT' },
      { method: 'PATCH', path: '/book/abc', allow: 'DELETE, GET, HEAD, PUT' },
      { method: 'GET', path: '/token', allow: 'POST' },
      { method: 'HEAD', path: '/token', allow: 'POST' },
      { method: 'POST', path: '/healthz', allow: 'GET, HEAD' },
      { method: 'OPTIONS', path: '/books', allow: 'GET, HEAD' },
      { method: 'OPTIONS', path: '/book/1', allow: 'DELETE, GET, HEAD, PUT' },
    ];
    for (const row of rows) {
      it(`405 for ${row.method} ${row.path} with Allow: ${row.allow}, without a token`, async () => {
        const res = await app.request(row.method, row.path, { auth: false });
        assert.equal(res.status, 405);
        assert.equal(res.headers.get('allow'), row.allow);
        if (row.method !== 'HEAD') assert.deepEqual(res.json, NOT_ALLOWED);
      });
    }
  });

  describe('order of checks: route (404, then 405) → auth (401) → {id} (400) → body', () => {
    it('PATCH /book/abc is 405 (route before auth and id)', async () => {
      assert.equal((await app.request('PATCH', '/book/abc', { auth: false })).status, 405);
    });
    it('GET /book/abc without a token is 401 Authorization token required (auth before id)', async () => {
      assert.deepEqual((await app.request('GET', '/book/abc', { auth: false })).json, {
        status: 401,
        message: 'Authorization token required',
        data: null,
      });
    });
    it('GET /book/abc with an invalid token is 401 Invalid token', async () => {
      assert.equal((await app.request('GET', '/book/abc', { headers: { authorization: 'x.y.z' } })).json.message, 'Invalid token');
    });
    it('PUT /book/abc with a valid token and a malformed body is 400 Invalid book id (id before body)', async () => {
      assert.deepEqual((await app.request('PUT', '/book/abc', { rawBody: '{bad' })).json, BAD_ID);
    });
    it('PUT /book/999 with a malformed body is 404 Book not found (look-up before body)', async () => {
      assert.equal((await app.request('PUT', '/book/999', { rawBody: '{bad' })).json.message, 'Book not found');
    });
  });

  describe('{id} must be decimal digits naming a safe integer', () => {
    const bad = ['abc', '-1', '1.5', '99999999999999999999', '9007199254740992', '%31', '1e3', '0x10', '+1', '1a', '1,2'];
    for (const id of bad) {
      it(`400 Invalid book id for /book/${id}`, async () => {
        for (const method of ['GET', 'PUT', 'DELETE']) {
          const res = await app.request(method, `/book/${id}`, method === 'PUT' ? { body: {} } : {});
          assert.deepEqual(res.json, BAD_ID, `${method} /book/${id}`);
        }
      });
    }
    it('/book/007 is book 7', async () => {
      const res = await app.request('GET', '/book/007');
      assert.equal(res.status, 200);
      assert.equal((res.json.data as { id: number }).id, 7);
    });
    it('/book/9007199254740991 (the largest safe integer) is a valid id no book has: 404 Book not found', async () => {
      assert.equal((await app.request('GET', '/book/9007199254740991')).json.message, 'Book not found');
    });
    it('/book/0 is a valid id no book has: 404 Book not found', async () => {
      assert.equal((await app.request('GET', '/book/0')).json.message, 'Book not found');
    });
  });

  describe('one trailing slash is tolerated', () => {
    it('GET /books/ equals GET /books', async () => {
      assert.equal((await app.request('GET', '/books/')).text, (await app.request('GET', '/books')).text);
    });
    it('GET /book/1/ equals GET /book/1', async () => {
      assert.equal((await app.request('GET', '/book/1/')).text, (await app.request('GET', '/book/1')).text);
    });
    it('POST /book/ creates a book', async () => {
      assert.equal((await app.request('POST', '/book/', { body: { title: 't', author: 'a', year: 1 } })).status, 201);
    });
    it('GET /healthz/ is 200', async () => {
      assert.equal((await app.request('GET', '/healthz/', { auth: false })).status, 200);
    });
    it('two trailing slashes are not: GET /books// is 404', async () => {
      assert.equal((await app.request('GET', '/books//')).status, 404);
    });
  });

  describe('an absolute-form request target is served like its path (RFC 9112 §3.2.2)', () => {
    it('GET http://host/books?x=1 is GET /books', async () => {
      const res = await rawRequest(app.port, `GET http://127.0.0.1:${app.port}/books?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${app.token()}\r\n\r\n`);
      assert.equal(res.status, 200);
      assert.equal(res.json?.message, 'Books retrieved successfully');
    });
    it('GET http://host (no path) is the root path: 404 Not found', async () => {
      const res = await rawRequest(app.port, 'GET http://127.0.0.1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      assert.equal(res.status, 404);
      assert.equal(res.json?.message, 'Not found');
    });
    it('the asterisk-form asks about the server (RFC 9110 §9.3.7): OPTIONS * is 200 OK with Allow, any other method 404', async () => {
      const res = await rawRequest(app.port, 'OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { status: 200, message: 'OK', data: null });
      assert.equal(res.headers.allow, 'DELETE, GET, HEAD, OPTIONS, POST, PUT');
      assert.equal((await rawRequest(app.port, 'GET * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')).status, 404);
    });
  });

  describe('query strings are ignored on every route', () => {
    it('GET /books?x=1 equals GET /books', async () => {
      assert.equal((await app.request('GET', '/books?x=1')).text, (await app.request('GET', '/books')).text);
    });
    it('GET /healthz?verbose=1 is 200 OK', async () => {
      assert.equal((await app.request('GET', '/healthz?verbose=1', { auth: false })).json.message, 'OK');
    });
    it('DELETE /books?x=1 is 405 like DELETE /books', async () => {
      assert.equal((await app.request('DELETE', '/books?x=1')).status, 405);
    });
    it('GET /nope?x=1 is 404 like GET /nope', async () => {
      assert.equal((await app.request('GET', '/nope?x=1')).status, 404);
    });
    it('GET /book/1/?x=1 is book 1 (trailing slash and query together)', async () => {
      assert.equal((await app.request('GET', '/book/1/?x=1')).status, 200);
    });
  });

  describe('HEAD works wherever GET does, without a body', () => {
    for (const [path, auth] of [['/books', true], ['/book/1', true], ['/healthz', false]] as const) {
      it(`HEAD ${path} answers the status and headers of GET ${path} with no body`, async () => {
        const get = await app.request('GET', path, { auth });
        const conn = await openConnection(app.port);
        try {
          const token = auth ? `Authorization: ${app.token()}\r\n` : '';
          // The second request carries a token: a request pipelined behind another without one closes the
          // connection (docs/contract.md, "Transport").
          conn.write(`HEAD ${path} HTTP/1.1\r\nHost: t\r\n${token}\r\nGET /healthz HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\n\r\n`);
          const head = await conn.response({ head: true });
          assert.equal(head.status, get.status);
          assert.equal(head.headers['content-type'], get.headers.get('content-type'));
          assert.equal(head.headers['content-length'], get.headers.get('content-length'));
          // No body bytes: the next response on the connection starts right after the head.
          const next = await conn.response();
          assert.equal(next.status, 200);
          assert.equal(next.json?.message, 'OK');
        } finally {
          conn.destroy();
        }
      });
    }
    it('HEAD /books without a token is 401 (auth applies like GET)', async () => {
      const res = await rawRequest(app.port, 'HEAD /books HTTP/1.1\r\nHost: t\r\n\r\n', { head: true });
      assert.equal(res.status, 401);
    });
    it('HEAD /book/404 is 404', async () => {
      assert.equal((await app.request('HEAD', '/book/404')).status, 404);
    });
  });
});
