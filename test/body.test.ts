import assert from 'node:assert/strict';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_PASSWORD, TEST_USER, type TestApp } from './helpers/app.ts';
import { ClientAbortedError, readJsonObject } from '../src/http/body.ts';
import { openConnection, rawRequest, rawRequestThenClose, type RawResponse } from './helpers/raw.ts';
import { until, within } from './helpers/wait.ts';

const LIMIT = 64 * 1024;
const TOO_LARGE = { status: 413, message: 'Payload too large', data: null };
const BOOK = '{"title":"Dune","author":"Frank Herbert","year":1965}';

/** The three endpoints that read a body, and their 400 message (docs/contract.md, "Messages"). */
const ENDPOINTS = [
  { method: 'POST', path: '/book', message: 'Invalid input' },
  { method: 'PUT', path: '/book/1', message: 'Invalid input' },
  { method: 'POST', path: '/token', message: 'Invalid request payload' },
] as const;

describe('request bodies (docs/contract.md, "Bodies")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
    await app.request('POST', '/book', { rawBody: BOOK });
  });
  after(() => app.close());

  /** Sends `body` bytes exactly, with a token, on a fresh connection. */
  function sendBytes(method: string, path: string, body: Uint8Array, extraHeaders = ''): Promise<RawResponse> {
    const head = `${method} ${path} HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Length: ${body.length}\r\n${extraHeaders}\r\n`;
    return rawRequest(app.port, Buffer.concat([Buffer.from(head, 'latin1'), body]));
  }

  describe('a body that is not a JSON object is the endpoint\'s 400', () => {
    const bodies: { name: string; bytes: Uint8Array }[] = [
      { name: 'malformed JSON', bytes: Buffer.from('{"title":"Dune",}') },
      { name: 'empty', bytes: Buffer.alloc(0) },
      { name: 'only whitespace', bytes: Buffer.from('  \n') },
      { name: 'a JSON array', bytes: Buffer.from(`[${BOOK}]`) },
      { name: 'JSON null', bytes: Buffer.from('null') },
      { name: 'a JSON string', bytes: Buffer.from('"Dune"') },
      { name: 'a JSON number', bytes: Buffer.from('1965') },
      { name: 'JSON true', bytes: Buffer.from('true') },
      { name: 'two JSON objects', bytes: Buffer.from(`${BOOK}${BOOK}`) },
      { name: 'a leading byte-order mark (UTF-8 BOM)', bytes: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(BOOK)]) },
      { name: 'invalid UTF-8 (a lone continuation byte)', bytes: Buffer.from('{"title":"\x80","author":"a","year":1}', 'latin1') },
      { name: 'invalid UTF-8 (0xFF)', bytes: Buffer.from('{"title":"\xff","author":"a","year":1}', 'latin1') },
      { name: 'invalid UTF-8 (an overlong "/")', bytes: Buffer.from('{"title":"\xc0\xaf","author":"a","year":1}', 'latin1') },
      { name: 'invalid UTF-8 (an encoded surrogate)', bytes: Buffer.from('{"title":"\xed\xa0\x80","author":"a","year":1}', 'latin1') },
      { name: 'invalid UTF-8 (a truncated sequence)', bytes: Buffer.from('{"title":"\xe2\x82","author":"a","year":1}', 'latin1') },
      { name: 'UTF-16', bytes: Buffer.from(BOOK, 'utf16le') },
      { name: 'form-encoded', bytes: Buffer.from('title=Dune&author=Herbert&year=1965') },
      { name: 'JSON with comments', bytes: Buffer.from('{/* c */"title":"Dune","author":"a","year":1}') },
      { name: 'JSON with single quotes', bytes: Buffer.from("{'title':'Dune','author':'a','year':1}") },
      { name: 'a NUL byte', bytes: Buffer.from('\0') },
      { name: 'invalid UTF-8 (0xFF) after 5,000 bytes of ASCII', bytes: Buffer.from(`${' '.repeat(5000)}{"title":"\xff","author":"a","year":1}`, 'latin1') },
    ];
    for (const { method, path, message } of ENDPOINTS) {
      for (const body of bodies) {
        it(`${method} ${path}: 400 ${message} when the body is ${body.name}`, async () => {
          const res = await sendBytes(method, path, body.bytes);
          assert.equal(res.status, 400);
          assert.deepEqual(res.json, { status: 400, message, data: null });
        });
      }
    }
    it('the book is unchanged after all of them', async () => {
      assert.deepEqual((await app.request('GET', '/book/1')).json.data, { id: 1, ...JSON.parse(BOOK) });
    });
  });

  describe('a body is its UTF-8 text, short or long, ASCII or not', () => {
    const books = [
      { name: 'short, ASCII', body: '{"title":"Dune","author":"Frank Herbert","year":1965}' },
      { name: 'short, with non-ASCII characters', body: '{"title":"Düne — 🏜","author":"Frank Herbert","year":1965}' },
      { name: 'past 4,096 bytes of ASCII (whitespace)', body: `{"title":"Dune","author":"Frank Herbert","year":1965}${' '.repeat(5000)}` },
      { name: 'past 4,096 bytes, with non-ASCII characters', body: `{"title":"Düne — 🏜","author":"Frank Herbert","year":1965}${' '.repeat(5000)}` },
    ];
    for (const { name, body } of books) {
      it(`201 with the fields as sent: ${name}`, async () => {
        const res = await sendBytes('POST', '/book', Buffer.from(body, 'utf8'));
        assert.equal(res.status, 201);
        const { id, ...fields } = res.json?.data as Record<string, unknown>;
        assert.equal(typeof id, 'number');
        assert.deepEqual(fields, JSON.parse(body));
      });
    }
  });

  describe('the body is parsed as JSON whatever its Content-Type', () => {
    const types = ['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'];
    for (const type of types) {
      it(`201 for POST /book with Content-Type: ${type}`, async () => {
        const res = await app.request('POST', '/book', { rawBody: BOOK, headers: { 'content-type': type } });
        assert.equal(res.status, 201);
      });
    }
    it('201 for POST /book with no Content-Type at all', async () => {
      const res = await sendBytes('POST', '/book', Buffer.from(BOOK));
      assert.equal(res.status, 201);
    });
    it('except POST /token: Content-Type text/plain is 400 Invalid request payload (docs/contract.md, "Logins")', async () => {
      const res = await app.request('POST', '/token', {
        rawBody: JSON.stringify({ username: TEST_USER, password: TEST_PASSWORD }),
        headers: { 'content-type': 'text/plain' },
        auth: false,
      });
      assert.deepEqual(res.json, { status: 400, message: 'Invalid request payload', data: null });
    });
  });

  describe('valid JSON details', () => {
    it('duplicate keys: the last one wins (as JSON.parse)', async () => {
      const res = await app.request('POST', '/book', { rawBody: '{"title":"first","title":"last","author":"a","year":"x","year":2}' });
      assert.equal(res.status, 201);
      assert.deepEqual(res.json.data, { id: (res.json.data as { id: number }).id, title: 'last', author: 'a', year: 2 });
    });
    it('duplicate keys: an invalid last value is 400 even when an earlier one was valid', async () => {
      const res = await app.request('POST', '/book', { rawBody: '{"title":"t","author":"a","year":2,"year":"x"}' });
      assert.equal(res.status, 400);
    });
    it('whitespace around the object is fine', async () => {
      assert.equal((await app.request('POST', '/book', { rawBody: `\r\n\t ${BOOK} \n` })).status, 201);
    });
    it('valid multi-byte UTF-8 is decoded', async () => {
      const res = await sendBytes('POST', '/book', Buffer.from('{"title":"Les Misérables 📚","author":"Hugo","year":1862}'));
      assert.equal((res.json?.data as { title: string }).title, 'Les Misérables 📚');
    });
    it('escaped characters are decoded (\\u00e9, \\n)', async () => {
      const res = await app.request('POST', '/book', { rawBody: '{"title":"caf\\u00e9\\nbar","author":"a","year":1}' });
      assert.equal((res.json.data as { title: string }).title, 'café\nbar');
    });
    it('a __proto__ key is an ignored unknown field and pollutes nothing', async () => {
      const res = await app.request('POST', '/book', { rawBody: '{"title":"t","author":"a","year":1,"__proto__":{"admin":true}}' });
      assert.equal(res.status, 201);
      assert.deepEqual(Object.keys(res.json.data as object), ['id', 'title', 'author', 'year']);
      assert.equal(({} as Record<string, unknown>).admin, undefined);
    });
  });

  describe('64 KiB limit: 413 Payload too large with Connection: close', () => {
    /** A valid book body of exactly `size` bytes, padded with an ignored field. */
    const sized = (size: number): string => {
      const base = '{"title":"t","author":"a","year":1,"pad":""}';
      return base.replace('"pad":""', `"pad":"${'x'.repeat(size - base.length)}"`);
    };

    it('a body of exactly 64 KiB is accepted', async () => {
      const res = await app.request('POST', '/book', { rawBody: sized(LIMIT) });
      assert.equal(res.status, 201);
    });

    for (const { method, path } of ENDPOINTS) {
      it(`${method} ${path}: 413 for a body of 64 KiB + 1 byte declared by Content-Length`, async () => {
        const res = await app.request(method, path, { rawBody: sized(LIMIT + 1) });
        assert.equal(res.status, 413);
        assert.deepEqual(res.json, TOO_LARGE);
        assert.equal(res.headers.get('connection'), 'close');
      });
    }

    it('refused by Content-Length before a byte of the body is sent, then the connection closes', async () => {
      const res = await rawRequestThenClose(
        app.port,
        `POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Length: ${LIMIT + 1}\r\n\r\n`,
      );
      assert.deepEqual(res.json, TOO_LARGE);
      assert.equal(res.headers.connection, 'close');
    });

    it('a chunked body without a length is counted while read: 413, then the connection closes', async () => {
      const conn = await openConnection(app.port);
      conn.write(`POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nTransfer-Encoding: chunked\r\n\r\n`);
      // 17 chunks of 4 KiB: past the limit, and the final zero-length chunk is never sent.
      for (let i = 0; i < 17; i++) conn.write(`1000\r\n${'x'.repeat(4096)}\r\n`);
      const res = await conn.response();
      assert.deepEqual(res.json, TOO_LARGE);
      assert.equal(res.headers.connection, 'close');
      await within('the server closing the connection after its 413', conn.closed);
    });

    it('a chunked body within the limit is read whole', async () => {
      const conn = await openConnection(app.port);
      try {
        const half = BOOK.length >> 1;
        const chunk = (s: string): string => `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
        conn.write(`POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nTransfer-Encoding: chunked\r\n\r\n`);
        conn.write(chunk(BOOK.slice(0, half)));
        conn.write(`${chunk(BOOK.slice(half))}0\r\n\r\n`);
        assert.equal((await conn.response()).status, 201);
      } finally {
        conn.destroy();
      }
    });

    it('the service keeps answering afterwards', async () => {
      const res = await app.request('GET', '/book/1');
      assert.equal(res.status, 200);
    });
  });

  it('a body declared by Content-Length is taken at its last byte, however it is split: sent in pieces, a request pipelined right after it is the next one', async () => {
    const conn = await openConnection(app.port);
    try {
      const body = Buffer.from('{"title":"Pieces","author":"A","year":2001}');
      conn.write(`POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Length: ${body.length}\r\n\r\n`);
      for (let at = 0; at < body.length - 1; at += 7) {
        conn.write(body.subarray(at, Math.min(at + 7, body.length - 1)));
        await new Promise((resolve) => setImmediate(resolve));
      }
      conn.write(Buffer.concat([body.subarray(body.length - 1), Buffer.from(`GET /book/1 HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\n\r\n`)]));
      const created = await conn.response();
      assert.equal(created.status, 201);
      assert.deepEqual(created.json?.data, { id: (created.json?.data as { id: number }).id, title: 'Pieces', author: 'A', year: 2001 });
      const next = await conn.response();
      assert.deepEqual([next.status, next.json?.message], [200, 'Book retrieved successfully']);
    } finally {
      conn.destroy();
    }
  });

  it('a client that hangs up mid-body does not disturb the service', async () => {
    const conn = await openConnection(app.port);
    conn.write(`POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Length: 100\r\n\r\n{"title":`);
    conn.destroy();
    await conn.closed;
    assert.equal((await app.request('GET', '/books')).status, 200);
    // Nobody is left to answer: it is a debug note, not a 500 and an error line.
    await until('the debug line "client went away mid-request"', () => app.logs.some((l) => l.includes('client went away mid-request')));
    assert.ok(!app.logs.some((l) => (JSON.parse(l) as { level: number }).level >= 50), 'no error line');
  });
});

describe('bytes after a body shorter than the rest of its read (garbage after a short Content-Length)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('the answer to the request is the connection\'s last: Connection: close, and no answer to the garbage after it', async () => {
    const conn = await openConnection(app.port);
    try {
      const garbage = '\u00f0'.repeat(2000);
      conn.write(Buffer.from(`POST /book HTTP/1.1\r\nHost: t\r\nAuthorization: ${app.token()}\r\nContent-Length: 5\r\n\r\n{"tit${garbage}`, 'latin1'));
      const res = await conn.response();
      assert.deepEqual(res.json, { status: 400, message: 'Invalid input', data: null });
      assert.equal(res.headers.connection, 'close', 'the parse error after the body makes this answer the last');
      await within('the server closing the connection after its answer', conn.closed);
      await assert.rejects(conn.response(), 'nothing follows the answer');
    } finally {
      conn.destroy();
    }
  });
});

describe('readJsonObject on a request already gone (a PUT whose client left while it waited for the store)', () => {
  it('is refused at once as ClientAbortedError, not left waiting for events that were already emitted', async () => {
    const req = new IncomingMessage(new Socket());
    req.destroy();
    await new Promise((resolve) => req.once('close', resolve));
    await assert.rejects(within('readJsonObject settling on a destroyed request', readJsonObject(req, 'invalidInput')), ClientAbortedError);
  });
});
