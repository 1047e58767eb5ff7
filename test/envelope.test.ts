import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, storeWith, TEST_PASSWORD, TEST_USER, type TestApp } from './helpers/app.ts';
import { rawRequestThenClose, type RawResponse } from './helpers/raw.ts';

/** docs/contract.md, "Envelope": on every answer, whatever its status. */
const COMMON_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const;

function assertEnvelope(status: number, headers: (name: string) => string | null | undefined, text: string, message: string): void {
  for (const [name, value] of Object.entries(COMMON_HEADERS)) assert.equal(headers(name), value, name);
  const body = JSON.parse(text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(body), ['status', 'message', 'data'], 'key order status, message, data');
  assert.equal(body.status, status, 'envelope status equals the HTTP status');
  assert.equal(body.message, message);
  if (status >= 400) assert.equal(body.data, null, 'data is null on errors');
  assert.equal(headers('content-length'), String(Buffer.byteLength(text)));
}

describe('the envelope on every status (docs/contract.md, "Envelope" and "Messages")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ loginMaxFailures: 1 });
    await app.request('POST', '/book', { body: { title: 't', author: 'a', year: 1 } });
  });
  after(() => app.close());

  const rows: { status: number; message: string; method: string; path: string; rawBody?: string; auth?: false; headers?: Record<string, string> }[] = [
    { status: 200, message: 'Books retrieved successfully', method: 'GET', path: '/books' },
    { status: 200, message: 'Book retrieved successfully', method: 'GET', path: '/book/1' },
    { status: 200, message: 'Book updated successfully', method: 'PUT', path: '/book/1', rawBody: '{}' },
    { status: 200, message: 'OK', method: 'GET', path: '/healthz', auth: false },
    { status: 201, message: 'Book created successfully', method: 'POST', path: '/book', rawBody: '{"title":"t","author":"a","year":2}' },
    { status: 200, message: 'Token generated successfully', method: 'POST', path: '/token', auth: false, rawBody: JSON.stringify({ username: TEST_USER, password: TEST_PASSWORD }) },
    { status: 400, message: 'Invalid input', method: 'POST', path: '/book', rawBody: '[]' },
    { status: 400, message: 'Invalid request payload', method: 'POST', path: '/token', auth: false, rawBody: '[]' },
    { status: 400, message: 'Invalid book id', method: 'GET', path: '/book/x' },
    { status: 401, message: 'Authorization token required', method: 'GET', path: '/books', auth: false },
    { status: 401, message: 'Invalid token', method: 'GET', path: '/books', headers: { authorization: 'a.b.c' } },
    { status: 401, message: 'Invalid credentials', method: 'POST', path: '/token', auth: false, rawBody: '{"username":"x","password":"y"}' },
    { status: 429, message: 'Too many login attempts', method: 'POST', path: '/token', auth: false, rawBody: '{"username":"x","password":"y"}' },
    { status: 404, message: 'Book not found', method: 'GET', path: '/book/42' },
    { status: 404, message: 'Not found', method: 'GET', path: '/nope', auth: false },
    { status: 405, message: 'Method not allowed', method: 'PATCH', path: '/books', auth: false },
    { status: 413, message: 'Payload too large', method: 'POST', path: '/book', rawBody: 'x'.repeat(64 * 1024 + 1) },
    { status: 200, message: 'Book deleted successfully', method: 'DELETE', path: '/book/1' },
  ];
  for (const row of rows) {
    it(`${row.status} ${row.message}: the envelope, with content-type, cache-control no-store and nosniff`, async () => {
      const res = await app.request(row.method, row.path, {
        ...(row.rawBody !== undefined && { rawBody: row.rawBody }),
        ...(row.auth === false && { auth: false }),
        ...(row.headers && { headers: row.headers }),
      });
      assert.equal(res.status, row.status);
      assertEnvelope(row.status, (n) => res.headers.get(n), res.text, row.message);
    });
  }

  // TOKEN is replaced by a valid token, so a body with bad chunk framing reaches the body reader.
  const rawRows: { status: number; message: string; request: string }[] = [
    { status: 400, message: 'Bad request', request: 'NOT A REQUEST LINE\r\n\r\n' },
    { status: 400, message: 'Bad request', request: 'GET /books HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n' },
    { status: 400, message: 'Bad request', request: 'GET /books HTTP/1.1\r\nHost: t\r\nBad Header\r\n\r\n' },
    { status: 400, message: 'Bad request', request: 'POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: TOKEN\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n' },
    { status: 431, message: 'Request header fields too large', request: `GET /books HTTP/1.1\r\nHost: t\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n` },
  ];
  for (const row of rawRows) {
    it(`${row.status} ${row.message} for a request Node's parser rejects (${JSON.stringify(row.request.slice(0, 40))}…), then the connection closes`, async () => {
      const res: RawResponse = await rawRequestThenClose(app.port, row.request.replace('TOKEN', app.token()));
      assert.equal(res.status, row.status);
      assertEnvelope(row.status, (n) => res.headers[n], res.body, row.message);
      assert.equal(res.headers.connection, 'close');
    });
  }

  it('the service answers normally after requests its parser rejected', async () => {
    assert.equal((await app.request('GET', '/healthz', { auth: false })).status, 200);
  });

  describe('X-Request-Id', () => {
    it('a client X-Request-Id is echoed', async () => {
      const res = await app.request('GET', '/nope', { headers: { 'x-request-id': 'abc-123' } });
      assert.equal(res.headers.get('x-request-id'), 'abc-123');
    });
    it('without one, an id is generated, different for each request', async () => {
      const a = (await app.request('GET', '/books')).headers.get('x-request-id');
      const b = (await app.request('GET', '/books')).headers.get('x-request-id');
      assert.ok(a !== null && a.length > 0);
      assert.notEqual(a, b);
    });
    it('an unusable client id (over 128 characters) is replaced by a generated one', async () => {
      const long = 'x'.repeat(129);
      const res = await app.request('GET', '/books', { headers: { 'x-request-id': long } });
      assert.notEqual(res.headers.get('x-request-id'), long);
      assert.ok((res.headers.get('x-request-id') ?? '').length > 0);
    });
    it('an id with a character outside visible ASCII (a space) is replaced, so log lines keep one token per id', async () => {
      const spaced = 'trace me';
      const res = await app.request('GET', '/books', { headers: { 'x-request-id': spaced } });
      assert.notEqual(res.headers.get('x-request-id'), spaced);
      assert.ok((res.headers.get('x-request-id') ?? '').length > 0);
    });
    it('the request id is the one in the log line', async () => {
      await app.request('GET', '/books', { headers: { 'x-request-id': 'trace-me-42' } });
      assert.ok(app.logs.some((l) => (JSON.parse(l) as { reqId?: string }).reqId === 'trace-me-42'));
    });
  });
});

describe('an unexpected failure is 500 Internal server error (docs/contract.md, "Envelope")', () => {
  const DETAIL = 'disk on fire at /secret/path';
  let app: TestApp;
  let url: string;
  before(async () => {
    // The real store, except that listing throws and creating rejects.
    const failing = storeWith(() => ({
      listSnapshot: () => {
        throw new Error(DETAIL);
      },
      create: () => Promise.reject(new Error(DETAIL)),
    }));
    app = await startApp({ logLevel: 'info', wrapStore: failing });
    url = app.url;
  });
  after(() => app.close());

  for (const [name, method, path, body] of [
    ['a handler that throws', 'GET', '/books', undefined],
    ['a handler whose promise rejects', 'POST', '/book', '{"title":"t","author":"a","year":1}'],
  ] as const) {
    it(`500 Internal server error for ${name}, with no stack or detail in the body`, async () => {
      const res = await fetch(url + path, { method, headers: { authorization: app.token() }, ...(body && { body }) });
      const text = await res.text();
      assert.equal(res.status, 500);
      assertEnvelope(500, (n) => res.headers.get(n), text, 'Internal server error');
      assert.ok(!text.includes(DETAIL) && !text.includes('at '), text);
    });
  }

  it('the detail is in the server log, under the request id', async () => {
    const res = await fetch(`${url}/books`, { headers: { authorization: app.token(), 'x-request-id': 'boom-1' } });
    assert.equal(res.status, 500);
    const line = app.logs.map((l) => JSON.parse(l) as { reqId?: string; level: number; err?: { message: string } }).find((l) => l.reqId === 'boom-1' && l.level === 50);
    assert.equal(line?.err?.message, DETAIL);
  });

  it('the service keeps answering after a 500', async () => {
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
  });
});
