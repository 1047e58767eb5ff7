import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { openConnection } from './helpers/raw.ts';
import { within } from './helpers/wait.ts';

describe('Expect: 100-continue is answered with the final status when it is already known', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ loginMaxFailures: 1 });
  });
  after(() => app.close());

  const rows = [
    { name: 'a declared 10 MB body (413)', head: (t: string) => `POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${t}\r\nContent-Length: 10000000\r\n`, status: 413 },
    { name: 'no token (401)', head: () => 'POST /book HTTP/1.1\r\nHost: t\r\nContent-Length: 10000000\r\n', status: 401 },
    { name: 'an unknown id (404)', head: (t: string) => `PUT /book/999 HTTP/1.1\r\nHost: t\r\nAuthorization: ${t}\r\nContent-Length: 40\r\n`, status: 404 },
    { name: 'an invalid id (400)', head: (t: string) => `PUT /book/x HTTP/1.1\r\nHost: t\r\nAuthorization: ${t}\r\nContent-Length: 40\r\n`, status: 400 },
    { name: 'an unknown path (404)', head: () => 'POST /upload HTTP/1.1\r\nHost: t\r\nContent-Length: 40\r\n', status: 404 },
  ];
  for (const row of rows) {
    it(`${row.name}: no 100 Continue, the final answer, then the connection closes`, async () => {
      const conn = await openConnection(app.port);
      try {
        conn.write(`${row.head(app.token())}Expect: 100-continue\r\n\r\n`);
        const res = await conn.response();
        assert.equal(res.status, row.status);
        assert.equal(res.headers.connection, 'close');
        await within('the server closing the connection after its answer', conn.closed);
      } finally {
        conn.destroy();
      }
    });
  }

  it('a request whose body is wanted gets 100 Continue, then its answer, and the connection is kept', async () => {
    const conn = await openConnection(app.port);
    try {
      const body = '{"title":"T","author":"A","year":2001}';
      conn.write(`POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`);
      assert.equal((await conn.response()).status, 100);
      conn.write(body);
      const created = await conn.response();
      assert.equal(created.status, 201);
      assert.equal(created.headers.connection, 'keep-alive');
      conn.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
      assert.equal((await conn.response()).status, 200);
    } finally {
      conn.destroy();
    }
  });

  it('a throttled login is 429 at once, without 100 Continue', async () => {
    const wrong = '{"username":"x","password":"y"}';
    const first = await app.request('POST', '/token', { auth: false, rawBody: wrong });
    assert.equal(first.status, 401);
    const conn = await openConnection(app.port);
    try {
      conn.write(`POST /token HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${wrong.length}\r\nExpect: 100-continue\r\n\r\n`);
      const res = await conn.response();
      assert.equal(res.status, 429);
    } finally {
      conn.destroy();
    }
  });
});
