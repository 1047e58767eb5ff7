import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { rawRequestThenClose } from './helpers/raw.ts';

const BAD_REQUEST = { status: 400, message: 'Bad request', data: null };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('requests whose framing is ambiguous are refused', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent' });
  });
  after(() => app.close());

  it('400 Bad request for two Host headers (RFC 9112 §3.2), then the connection closes', async () => {
    const res = await rawRequestThenClose(app.port, 'GET /healthz HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n');
    assert.deepEqual(res.json, BAD_REQUEST);
  });

  it('400 Bad request for two Authorization headers, even when both carry a valid token', async () => {
    const token = app.token();
    const res = await rawRequestThenClose(app.port, `GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nauthorization: Bearer ${token}\r\n\r\n`);
    assert.deepEqual(res.json, BAD_REQUEST);
  });

  it('one Host and one Authorization are served', async () => {
    const res = await rawRequestThenClose(app.port, `GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${app.token()}\r\nConnection: close\r\n\r\n`);
    assert.equal(res.status, 200);
  });

  it('400 Bad request for a request line without an HTTP version (HTTP/0.9 style)', async () => {
    const res = await rawRequestThenClose(app.port, 'GET /healthz\r\n\r\n');
    assert.deepEqual(res.json, BAD_REQUEST);
  });
});

describe("answers to requests Node's parser refuses carry an X-Request-Id", () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent' });
  });
  after(() => app.close());

  const rows = [
    { name: 'a malformed request line (400)', request: 'DELETE  HTTP/1.1\r\nHost: x\r\n\r\n', status: 400 },
    { name: 'conflicting Content-Length (400)', request: 'POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', status: 400 },
    { name: 'headers too large (431)', request: `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`, status: 431 },
  ];
  for (const row of rows) {
    it(`${row.name}: a generated one, never the client's`, async () => {
      const res = await rawRequestThenClose(app.port, row.request.replace('Host: x\r\n', 'Host: x\r\nX-Request-Id: client-chosen\r\n'));
      assert.equal(res.status, row.status);
      assert.match(res.headers['x-request-id'] ?? '', UUID);
    });
  }
});
