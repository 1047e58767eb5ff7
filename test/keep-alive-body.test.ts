import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { openConnection, type RawConnection } from './helpers/raw.ts';
import { within } from './helpers/wait.ts';

/** Sends one request, then a second on the same connection: both must be answered. */
async function twoOnOneConnection(conn: RawConnection, first: string): Promise<{ first: number; connection: string | undefined; second: number }> {
  conn.write(first);
  const a = await conn.response();
  conn.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
  const b = await conn.response();
  return { first: a.status, connection: a.headers.connection, second: b.status };
}

describe('an early answer keeps the connection when the unread body is small and declared', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  const body = '{"title":"x","author":"y","year":1}';
  const rows = [
    { name: 'PUT to an unknown id (404)', head: (t: string) => `PUT /book/999 HTTP/1.1\r\nHost: t\r\nAuthorization: ${t}\r\n`, status: 404 },
    { name: 'a GET with a body', head: (t: string) => `GET /books HTTP/1.1\r\nHost: t\r\nAuthorization: ${t}\r\n`, status: 200 },
    { name: 'POST /book without a token (401)', head: () => 'POST /book HTTP/1.1\r\nHost: t\r\n', status: 401 },
    { name: 'an unknown path (404)', head: () => 'POST /nowhere HTTP/1.1\r\nHost: t\r\n', status: 404 },
    { name: 'another method (405)', head: () => 'PATCH /books HTTP/1.1\r\nHost: t\r\n', status: 405 },
    { name: 'an invalid id (400)', head: (t: string) => `PUT /book/abc HTTP/1.1\r\nHost: t\r\nAuthorization: ${t}\r\n`, status: 400 },
  ];
  for (const row of rows) {
    it(`${row.name}: the body is discarded and the next request on the connection is answered`, async () => {
      const conn = await openConnection(app.port);
      try {
        const result = await twoOnOneConnection(conn, `${row.head(app.token())}Content-Length: ${body.length}\r\n\r\n${body}`);
        assert.deepEqual(result, { first: row.status, connection: 'keep-alive', second: 200 });
      } finally {
        conn.destroy();
      }
    });
  }

  it('a body of exactly 64 KiB, sent after the answer, is discarded too and the connection kept', async () => {
    const conn = await openConnection(app.port);
    try {
      conn.write('PUT /book/999 HTTP/1.1\r\nHost: t\r\nAuthorization: ' + app.token() + '\r\nContent-Length: 65536\r\n\r\n');
      const first = await conn.response();
      assert.equal(first.status, 404);
      assert.equal(first.headers.connection, 'keep-alive');
      conn.write(Buffer.alloc(65536, 0x61));
      conn.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
      assert.equal((await conn.response()).status, 200);
    } finally {
      conn.destroy();
    }
  });

  for (const [name, framing] of [
    ['over 64 KiB', 'Content-Length: 65537\r\n'],
    ['of unknown length (chunked)', 'Transfer-Encoding: chunked\r\n'],
  ] as const) {
    it(`a body ${name} still closes the connection`, async () => {
      const conn = await openConnection(app.port);
      try {
        conn.write(`PUT /book/999 HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\n${framing}\r\n`);
        const res = await conn.response();
        assert.equal(res.status, 404);
        assert.equal(res.headers.connection, 'close');
        await within('the server closing the connection after its answer', conn.closed);
      } finally {
        conn.destroy();
      }
    });
  }
});
