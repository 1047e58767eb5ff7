import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MemoryBudget, type Book } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { throttledGet, type ThrottledReader } from './helpers/throttled-reader.ts';

/*
 * The attack: full lists read a little at a time, each started on a state that writes to every
 * page then supersede, so each would keep a whole catalogue's worth of page texts alive. The
 * budget is a few lists' worth; the lists are far larger than loopback's socket buffers, and
 * pages (1024 books of ~2 KB) are 2 MB each.
 */
const PAGES = 12;
const BOOKS = PAGES * 1024 - 1;
const LIST_MB = 24;
const BUDGET = 40 * 2 ** 20;
/** Pace of each slow reader, in the order they start: the slowest first, the fastest last. */
const RATES = [16, 32, 64, 128, 256, 512, 1024, 8192].map((kib) => kib * 1024);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function usedHeap(): number {
  gc();
  return getHeapStatistics().used_heap_size;
}

function catalogue(): Book[] {
  return Array.from({ length: BOOKS }, (_, i) => ({ id: i + 1, title: `${i} ${'t'.repeat(990)}`, author: 'a'.repeat(1000), year: 2000 }));
}

/** One PUT in every index page, together: the state every open list shows is superseded whole. */
async function writeEveryPage(app: TestApp, round: number): Promise<void> {
  const writes = Array.from({ length: PAGES }, (_, key) => app.request('PUT', `/book/${key * 1024 + 1}`, { body: { year: 1000 + round } }));
  for (const res of await Promise.all(writes)) assert.equal(res.status, 200);
}

async function until(what: string, ready: () => boolean, ms = 60_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!ready()) {
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** What a normal client sees meanwhile: liveness, one book, and a whole list read as fast as it goes. */
async function normalClient(app: TestApp): Promise<void> {
  assert.equal((await app.request('GET', '/healthz', { auth: false })).status, 200);
  assert.equal((await app.request('GET', '/book/1')).status, 200);
  const list = await app.request('GET', '/books');
  assert.equal(list.status, 200);
  assert.equal((list.json.data as Book[]).length, BOOKS);
}

describe('slow full-list readers of superseded states stay inside the memory budget (list_snapshots)', () => {
  let app: TestApp;
  const readers: ThrottledReader[] = [];
  before(async () => {
    app = await startApp({ logLevel: 'warn', catalogue: catalogue(), memoryBudget: new MemoryBudget(BUDGET) });
  });
  after(async () => {
    for (const r of readers) r.destroy();
    await app.close();
  });

  it('the slowest reader is cut first, the fastest finishes, a normal client is served throughout, and what is held never passes the budget', { timeout: 240_000 }, async () => {
    const budget = app.server.app.memoryBudget;
    const list = await app.request('GET', '/books');
    assert.ok(Buffer.byteLength(list.text) > LIST_MB * 10 ** 6, `the list is ${list.text.length} bytes`);
    const before = usedHeap();
    // Seen from the server: a cut reader's client learns of it only once it has read what the kernel still holds.
    const ends = new Map<number, { at: number; finished: boolean }>();
    const watch = (req: IncomingMessage, res: ServerResponse): void => {
      const id = /^reader-(\d+)$/.exec(String(req.headers['x-request-id']));
      if (id !== null) res.once('close', () => ends.set(Number(id[1]), { at: performance.now(), finished: res.writableFinished }));
    };
    app.server.on('request', watch);
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, budget.held, budget.heldBy('list_snapshots'));
    }, 1);
    try {
      for (const [round, rate] of RATES.entries()) {
        const reader = await throttledGet(app.port, '/books', app.token(), rate, `x-request-id: reader-${round}\r\n`);
        readers.push(reader);
        await until(`reader ${round} receiving its answer`, () => reader.received > 0);
        await writeEveryPage(app, round);
        await normalClient(app);
      }
      const grown = usedHeap() - before;
      most = Math.max(most, budget.held);
      assert.ok(most <= BUDGET, `held ${most} bytes, over the budget of ${BUDGET}`);
      // Without the budget, every reader would keep its whole superseded state: 8 × ~20 MB.
      assert.ok(grown <= BUDGET + LIST_MB * 2 ** 20, `the heap grew by ${Math.round(grown / 2 ** 20)} MB during the attack`);
      assert.ok(budget.shedCount('list_snapshots') > 0, 'no list was shed');
      const fastest = readers.at(-1) as ThrottledReader;
      await until('the fastest reader finishing its list', () => fastest.complete || fastest.closedAt !== undefined);
      assert.ok(fastest.complete, `the fastest reader was cut after ${fastest.received} bytes`);
      const cut = [...ends].filter(([, end]) => !end.finished).sort(([, a], [, b]) => a.at - b.at);
      assert.ok(cut.length > 0, 'no reader was cut');
      assert.equal(cut[0]?.[0], 0, `the first cut was reader ${cut[0]?.[0]} (${RATES[cut[0]?.[0] ?? 0]} bytes/s), not the slowest`);
      await normalClient(app);
    } finally {
      clearInterval(sampler);
      app.server.off('request', watch);
    }
  });

  it('a list queued behind another on its connection lets go of its state when that connection closes', { timeout: 60_000 }, async () => {
    const budget = app.server.app.memoryBudget;
    for (const r of readers) r.destroy();
    await until('the earlier readers letting go', () => budget.heldBy('list_snapshots') === 0);
    let seen = 0;
    const count = (req: IncomingMessage): void => {
      if (req.url === '/books') seen++;
    };
    app.server.on('request', count);
    const socket = connect(app.port, '127.0.0.1');
    try {
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      socket.on('error', () => {});
      socket.pause();
      const get = `GET /books HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${app.token()}\r\n\r\n`;
      socket.write(get + get);
      await until('both lists being handled', () => seen === 2);
      // A round trip after them: their handlers have started sending.
      assert.equal((await app.request('GET', '/healthz', { auth: false })).status, 200);
      await writeEveryPage(app, 100);
      // The next list rebuilds the pages: only then are the old texts theirs alone.
      assert.equal((await app.request('GET', '/books')).status, 200);
      assert.ok(budget.heldBy('list_snapshots') > 0, 'the two lists hold their superseded state');
    } finally {
      app.server.off('request', count);
      socket.destroy();
    }
    await until(`the lists letting go (still ${budget.heldBy('list_snapshots')} bytes held)`, () => budget.heldBy('list_snapshots') === 0, 10_000);
  });
});
