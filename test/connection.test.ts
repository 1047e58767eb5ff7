import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { openConnection } from './helpers/raw.ts';
import { within } from './helpers/wait.ts';

describe('connections: answers are never lost or held open by what the client sends next', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('a pipelined request that fails to parse does not replace the answer to the complete request before it', async () => {
    const conn = await openConnection(app.port);
    try {
      const body = JSON.stringify({ title: 'Pipelined', author: 'A', year: 2000 });
      conn.write(
        `POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}GARBAGE\r\n\r\n`,
      );
      const first = await conn.response();
      assert.equal(first.status, 201);
      assert.equal(first.json?.message, 'Book created successfully');
      await within('the server closing the connection after the bytes it could not parse', conn.closed);
    } finally {
      conn.destroy();
    }
  });

  const early = [
    { name: '401 without a token', request: 'POST /book', auth: false, status: 401 },
    { name: '404 for PUT of an unknown id', request: 'PUT /book/999', auth: true, status: 404 },
    { name: '400 for an invalid id', request: 'PUT /book/abc', auth: true, status: 400 },
  ];
  for (const row of early) {
    it(`an answer sent before the body is read (${row.name}) closes the connection instead of draining the upload`, async () => {
      const conn = await openConnection(app.port);
      try {
        const auth = row.auth ? `Authorization: ${app.token()}\r\n` : '';
        // Only the head is sent: a client streaming a large upload.
        conn.write(`${row.request} HTTP/1.1\r\nHost: t\r\n${auth}Content-Length: 1000000000\r\n\r\n`);
        const res = await conn.response();
        assert.equal(res.status, row.status);
        assert.equal(res.headers.connection, 'close');
        await within('the server closing the connection after its answer', conn.closed);
      } finally {
        conn.destroy();
      }
    });
  }

  it('an early answer to a request without a body keeps the connection alive', async () => {
    const conn = await openConnection(app.port);
    try {
      conn.write('GET /books HTTP/1.1\r\nHost: t\r\n\r\n');
      const first = await conn.response();
      assert.equal(first.status, 401);
      assert.equal(first.headers.connection, 'keep-alive');
      conn.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
      assert.equal((await conn.response()).status, 200);
    } finally {
      conn.destroy();
    }
  });
});
