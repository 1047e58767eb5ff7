import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { crc32, inflateRawSync } from 'node:zlib';
import { MemoryBudget, type Book } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { decoded, encodedGet } from './helpers/encoded-get.ts';
import { mostWrittenPerTurn } from './helpers/event-loop.ts';
import { throttledGet } from './helpers/throttled-reader.ts';
import { until } from './helpers/wait.ts';

/*
 * GET /books in full, streamed gzip-encoded through real HTTP (docs/contract.md, "Compression"):
 * one gzip member, chunked until every page has been compressed once, then with its exact
 * Content-Length; compressed a piece at a time between other clients' turns; and a slow reader of
 * it is held to the memory budget as any list is.
 */

const GZIP = { 'accept-encoding': 'gzip' };

/** Astral characters put surrogate pairs at piece boundaries; 60,000 books are far more than loopback's socket buffers hold. */
function catalogue(count: number): Book[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    title: i % 3 === 0 ? `${'😀'.repeat(1 + (i % 7))} Volume ${i}` : `Volume ${i} of the "long" set`,
    author: i % 5 === 0 ? 'Émile Zola' : 'Jane Austen',
    year: 1800 + (i % 200),
  }));
}

describe('GET /books in full, gzip-encoded', () => {
  let app: TestApp;
  let auth: Record<string, string>;
  before(async () => {
    app = await startApp({ catalogue: catalogue(60_000), logLevel: 'warn' });
    auth = { authorization: app.token() };
  });
  after(() => app.close());

  it('is one gzip member of the list as it is: chunked the first time, then with the exact Content-Length of the same bytes; HEAD gives the headers GET would', async () => {
    const identity = await encodedGet(app.port, '/books', auth);
    assert.equal(Number(identity.headers['content-length']), identity.body.length);
    const coldHead = await encodedGet(app.port, '/books', { ...auth, ...GZIP }, 'HEAD');
    assert.equal(coldHead.headers['content-length'], undefined, 'not known before the pages are compressed');
    const cold = await encodedGet(app.port, '/books', { ...auth, ...GZIP });
    assert.equal(cold.headers['content-encoding'], 'gzip');
    assert.equal(cold.headers['transfer-encoding'], 'chunked');
    assert.equal(cold.headers['content-length'], undefined);
    assert.equal(cold.headers.vary, 'Accept-Encoding');
    assert.equal(cold.headers.etag, `${(identity.headers.etag as string).slice(0, -1)}-gzip"`);
    assert.ok(decoded(cold).equals(identity.body), 'it decodes to the list');
    // One member (a decoder that reads only the first, as curl's does, still gets the whole list).
    assert.ok(inflateRawSync(cold.body.subarray(10, -8)).equals(identity.body), 'its one deflate stream is the whole list');
    assert.equal(cold.body.readUInt32LE(cold.body.length - 8), crc32(identity.body));
    assert.equal(cold.body.readUInt32LE(cold.body.length - 4), identity.body.length);
    assert.ok(cold.body.length < identity.body.length / 4, `${cold.body.length} bytes for ${identity.body.length}`);
    const warm = await encodedGet(app.port, '/books', { ...auth, ...GZIP });
    assert.equal(Number(warm.headers['content-length']), warm.body.length);
    assert.ok(warm.body.equals(cold.body), 'the same bytes, from the pages\' kept forms');
    const head = await encodedGet(app.port, '/books', { ...auth, ...GZIP }, 'HEAD');
    for (const name of ['content-encoding', 'content-length', 'content-type', 'etag', 'vary']) assert.equal(head.headers[name], warm.headers[name], name);
    const current = await encodedGet(app.port, '/books', { ...auth, ...GZIP, 'if-none-match': warm.headers.etag as string });
    assert.equal(current.status, 304);
    assert.equal(current.headers.vary, 'Accept-Encoding');
  });

  it('a list compressed as it goes leaves the event loop every 256 KiB of list text or so, and other clients are answered meanwhile', async () => {
    // A write to every page first: each is compressed anew, by this list, as it is sent.
    for (let key = 0; key * 1024 < 60_000; key++) assert.equal((await app.request('PUT', `/book/${key * 1024 + 1}`, { body: { year: 1999 } })).status, 200);
    let answered = 0;
    const stop = mostWrittenPerTurn(app.server, (req) => req.url === '/books' && req.headers['accept-encoding'] === 'gzip');
    let listing = true;
    const others = (async () => {
      while (listing) {
        assert.equal((await encodedGet(app.port, '/healthz', {})).status, 200);
        answered++;
      }
    })();
    const list = await encodedGet(app.port, '/books', { ...auth, ...GZIP });
    listing = false;
    await others;
    const { watched, most } = stop();
    assert.equal(list.headers['transfer-encoding'], 'chunked', 'compressed as it went');
    const plain = decoded(list).length;
    assert.ok(watched && most > 0, 'the list\'s connection was watched while it was written');
    // 256 KiB of text a turn and one piece beyond (64 Ki UTF-16 units, up to 4 bytes each here), at the list's ratio, with room for pages that compress less well.
    const bound = (list.body.length / plain) * (256 * 1024 + 4 * 65_536) * 2;
    assert.ok(most <= bound, `${most} compressed bytes written between two turns of the loop (bound ${Math.round(bound)}; the list is ${list.body.length} for ${plain})`);
    assert.ok(list.body.length > 4 * bound, 'the list is long enough to show a run');
    assert.ok(answered > 0, 'no other client was answered while the list was sent');
  });
});

describe('a slow reader of a gzip-encoded list is held to the memory budget (list_snapshots)', () => {
  /** Books that compress little (random text): 6 pages of about 2 MB each, far more than loopback's socket buffers. */
  const PAGES = 6;
  const BUDGET = 8 * 2 ** 20;
  let app: TestApp;
  before(async () => {
    const books = Array.from({ length: PAGES * 1024 - 1 }, (_, i) => ({ id: i + 1, title: randomBytes(750).toString('base64'), author: randomBytes(750).toString('base64'), year: 2000 }));
    app = await startApp({ catalogue: books, logLevel: 'warn', memoryBudget: new MemoryBudget(BUDGET) });
  });
  after(() => app.close());

  it('writes that supersede what it has still to send get it cut, its pages and their gzip forms never held past the budget; a normal client gets the whole list', { timeout: 120_000 }, async () => {
    const budget = app.server.app.memoryBudget;
    // Every page compressed once: the reader's answer then says its length, and when it is complete.
    assert.equal((await encodedGet(app.port, '/books', { authorization: app.token(), ...GZIP })).status, 200);
    // Seen from the server: a cut reader's client learns of it only once it has read what the kernel still holds.
    let end: { finished: boolean } | undefined;
    const watch = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.headers['x-request-id'] === 'slow-gzip-reader') res.once('close', () => (end = { finished: res.writableFinished }));
    };
    app.server.on('request', watch);
    const reader = await throttledGet(app.port, '/books', app.token(), 16 * 1024, 'accept-encoding: gzip\r\nx-request-id: slow-gzip-reader\r\n');
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, budget.held)), 1);
    try {
      await until('the slow reader receiving its answer', () => reader.received > 0);
      assert.match(reader.text(), /\r\ncontent-encoding: gzip\r\n/i);
      assert.match(reader.text(), /\r\ncontent-length: \d+\r\n/i);
      for (let key = 0; key < PAGES; key++) assert.equal((await app.request('PUT', `/book/${key * 1024 + 1}`, { body: { year: 1000 } })).status, 200);
      // The next list rebuilds the pages: only then are the old texts, and their gzip forms, the reader's alone.
      const list = await encodedGet(app.port, '/books', { authorization: app.token(), ...GZIP });
      assert.equal(list.status, 200);
      await until('the slow reader\'s answer ending', () => end !== undefined);
      assert.equal(end?.finished, false, 'the slow reader got its whole list');
      assert.ok(budget.shedCount('list_snapshots') > 0, 'no list was shed');
      most = Math.max(most, budget.held);
      assert.ok(most <= BUDGET, `held ${most} bytes, over the budget of ${BUDGET}`);
      const after = await encodedGet(app.port, '/books', { authorization: app.token(), ...GZIP });
      const books = (JSON.parse(decoded(after).toString('utf8')) as { data: Book[] }).data;
      assert.equal(books.length, PAGES * 1024 - 1);
      assert.ok(books.every((book, i) => book.id === i + 1));
    } finally {
      clearInterval(sampler);
      app.server.off('request', watch);
      reader.destroy();
    }
  });
});
