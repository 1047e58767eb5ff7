import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listBody } from '../src/books/list-body.ts';
import { ANSWERS } from '../src/http/messages.ts';
import { MemoryBudget, type Book } from '../src/index.ts';
import { bookJson } from '../src/model/book.ts';
import { BookIndex, pageOf } from '../src/store/book-index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { mostWrittenPerTurn } from './helpers/event-loop.ts';
import { listJsonOf } from './helpers/store-books.ts';

/** Enough books for several index pages and an answer far larger than loopback socket buffers. */
const COUNT = 60_000;

function catalogue(): Book[] {
  return Array.from({ length: COUNT }, (_, i) => ({
    id: i + 1,
    // Astral characters make every piece boundary a chance to split a surrogate pair.
    title: i % 3 === 0 ? `${'😀'.repeat(1 + (i % 7))} Volume ${i}` : `Volume ${i} of the "long" set`,
    author: i % 5 === 0 ? 'Émile Zola' : 'Jane Austen',
    year: 1800 + (i % 200),
  }));
}

function envelope(books: readonly Book[]): string {
  return `{"status":200,"message":"Books retrieved successfully","data":[${books.map(bookJson).join(',')}]}`;
}

/** A GET /books whose answer nobody reads until `read()` is called. */
async function stalledList(port: number, token: string): Promise<{ socket: Socket; read: () => Promise<string> }> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  socket.write(`GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nConnection: close\r\n\r\n`);
  const read = async (): Promise<string> => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.resume();
    await new Promise((resolve) => socket.once('end', resolve));
    const text = Buffer.concat(chunks).toString('utf8');
    return text.slice(text.indexOf('\r\n\r\n') + 4);
  };
  return { socket, read };
}

describe('GET /books streamed from the index pages', () => {
  let app: TestApp;
  let books: Book[];
  before(async () => {
    books = catalogue();
    app = await startApp({ catalogue: books, logLevel: 'warn' });
  });
  after(() => app.close());

  it('is byte-identical to every book in ascending id order, with an exact Content-Length', async () => {
    // As it is: fetch asks for gzip, whose length is the compressed one (test/compression.test.ts).
    const res = await app.request('GET', '/books', { headers: { 'accept-encoding': 'identity' } });
    const expected = envelope(books);
    assert.equal(res.status, 200);
    assert.ok(res.text === expected, 'the streamed bytes differ from the books in order');
    assert.equal(res.headers.get('content-length'), String(Buffer.byteLength(expected)));
  });

  it('HEAD /books has the same status and headers and no body', async () => {
    const get = await app.request('GET', '/books', { headers: { 'accept-encoding': 'identity' } });
    const head = await fetch(`${app.url}/books`, { method: 'HEAD', headers: { authorization: app.token(), 'accept-encoding': 'identity' } });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), get.headers.get('content-length'));
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
    assert.equal(await head.text(), '');
  });

  it('a write committed while a list is being sent is wholly out of it: the state when it was asked', async () => {
    const before = await app.request('GET', '/books');
    const list = await stalledList(app.port, app.token());
    // Let the service take the request and fill the socket before the writes commit.
    await app.request('GET', '/healthz', { auth: false });
    const last = (JSON.parse(before.text) as { data: Book[] }).data.at(-1) as Book;
    const writes = await Promise.all([
      app.request('PUT', '/book/1', { body: { title: 'Changed first' } }),
      app.request('PUT', `/book/${last.id}`, { body: { title: 'Changed last' } }),
      app.request('DELETE', `/book/${last.id - 1}`),
      app.request('POST', '/book', { body: { title: 'New', author: 'A', year: 2000 } }),
    ]);
    assert.deepEqual(writes.map((w) => w.status), [200, 200, 200, 201]);
    assert.ok((await list.read()) === before.text, 'the slow list shows exactly the state before the writes');
    const now = (await app.request('GET', '/books')).json.data as Book[];
    assert.equal(now[0]?.title, 'Changed first');
    assert.equal(now.at(-2)?.title, 'Changed last');
    assert.equal(now.at(-1)?.title, 'New');
  });

  it('a list to a reader as fast as loopback leaves the event loop every 256 KiB or so', async () => {
    // A write the kernel takes at once emits 'drain' from process.nextTick: without a budget that
    // spans drains, a fast reader's list is written in one unbroken run and stalls every client.
    const stop = mostWrittenPerTurn(app.server, (req) => req.url === '/books');
    const res = await app.request('GET', '/books');
    const { watched, most } = stop();
    assert.equal(res.status, 200);
    assert.ok(watched && most > 0, 'the list\'s connection was watched while it was written');
    assert.ok(Buffer.byteLength(res.text) > 4 * 1024 * 1024, `the list is ${res.text.length} units, too small to show a run`);
    // 256 Ki UTF-16 units a turn and one piece beyond, each unit up to 2 bytes in these titles.
    assert.ok(most <= 2 * (256 + 64) * 1024, `${most} bytes written between two turns of the loop`);
  });

  it('a reader that stops reading holds a bounded part of its answer, however many writes follow', async () => {
    const answers: ServerResponse[] = [];
    const capture = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.url === '/books') answers.push(res);
    };
    app.server.on('request', capture);
    const stalled = await Promise.all([1, 2, 3].map(() => stalledList(app.port, app.token())));
    await app.request('GET', '/healthz', { auth: false });
    const held = (): number => Math.max(...answers.map((res) => res.writableLength));
    const first = held();
    for (let i = 0; i < 20; i++) {
      await app.request('PUT', `/book/${2 + i * 1000}`, { body: { title: `Write ${i}` } });
      // Each write is followed by another list that nobody reads either.
      stalled.push(await stalledList(app.port, app.token()));
    }
    await app.request('GET', '/healthz', { auth: false });
    app.server.off('request', capture);
    assert.equal(answers.length, 23);
    // One piece (64 Ki UTF-16 units, up to 4 bytes each in UTF-8) and the socket's own buffer.
    const bound = 4 * 65_536 + 64 * 1024;
    assert.ok(first <= bound && held() <= bound, `buffered ${first} then ${held()} bytes for a reader that reads nothing`);
    for (const s of stalled) s.socket.destroy();
  });
});

describe('BookIndex snapshots share their pages', () => {
  it('listers of one state hold the same page texts; a change replaces only its own page', () => {
    const index = new BookIndex();
    for (let id = 1; id <= 10_000; id++) index.set(id, bookJson({ id, title: `T${id}`, author: 'A', year: 2000 }));
    const a = index.snapshot();
    const b = index.snapshot();
    assert.ok(a.pages.every((page, i) => page === b.pages[i]), 'two listers share every page');
    const text = a.pages.map((p) => p.text);
    index.set(5000, bookJson({ id: 5000, title: 'changed', author: 'A', year: 2000 }));
    index.delete(9000);
    const c = index.snapshot();
    assert.deepEqual(a.pages.map((p) => p.text), text, 'a snapshot never changes');
    // Ids 1 to 10,000 fill pages 0 to pageOf(10_000), so a page's place in a snapshot is its key.
    const changed = [pageOf(5000), pageOf(9000)];
    assert.notEqual(changed[0], changed[1]);
    assert.deepEqual(c.pages.map((p, i) => p === a.pages[i]), a.pages.map((_, key) => !changed.includes(key)));
    assert.equal(c.bytes, Buffer.byteLength(listJsonOf(index)));
    assert.equal(c.count, 9999);
  });
});

describe('a streamed list counts its progress in bytes without measuring its pieces', () => {
  it('the bytes each piece says it holds add up to the UTF-8 length of what was sent, which is its Content-Length', () => {
    const index = new BookIndex();
    for (const book of catalogue()) index.set(book.id, bookJson(book));
    const body = listBody(ANSWERS.booksRetrieved, index.snapshot(), new MemoryBudget(2 ** 30));
    const pieces = body.chunks({ sent: () => 0, cut: () => {} });
    let text = '';
    let bytes = 0;
    for (let piece = pieces.next(); piece.done !== true; piece = pieces.next()) {
      text += piece.value.text;
      bytes += piece.value.bytes;
      assert.ok(piece.value.bytes > 0 && piece.value.bytes <= 3 * piece.value.text.length, `${piece.value.bytes} bytes for ${piece.value.text.length} UTF-16 units`);
    }
    assert.equal(bytes, Buffer.byteLength(text));
    assert.equal(bytes, body.length);
  });
});
