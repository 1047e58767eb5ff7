import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createMetrics, type Book, type CatalogueMetrics } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { throttledGet } from './helpers/throttled-reader.ts';

/** 12 index pages of ~2 MB: a GET /books of ~24 MB, several times what loopback's socket buffers hold. */
const BOOKS = 12 * 1024 - 1;

function catalogue(): Book[] {
  return Array.from({ length: BOOKS }, (_, i) => ({ id: i + 1, title: `${i} ${'t'.repeat(990)}`, author: 'a'.repeat(1000), year: 2000 }));
}

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  statusCode?: number;
  responseTime?: number;
  incomplete?: boolean;
}

const lines = (app: TestApp): LogLine[] => app.logs.map((l) => JSON.parse(l) as LogLine);
const requestLine = (app: TestApp, reqId: string): LogLine | undefined => lines(app).find((l) => l.msg === 'request' && l.reqId === reqId);

async function until<T>(what: string, found: () => T | undefined, ms = 30_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a streamed answer must keep up with the progress floor (TRANSPORT_LIMITS.minStreamBytesPerSecond)', () => {
  // 8 MiB/s, with 5 s of lag allowed (the send timeout): shrunk from 64 KiB/s and 30 s so the file stays quick.
  const limits = { sendTimeoutMs: 5_000, minStreamBytesPerSecond: 8 * 2 ** 20, connectionsCheckingIntervalMs: 25 };
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'info', limits, catalogue: catalogue() });
  });
  after(() => app.close());

  it('a reader that keeps taking bytes, but fewer than the floor, is cut; one above it gets the whole list', { timeout: 60_000 }, async () => {
    let closed: { finished: boolean } | undefined;
    const watch = (req: IncomingMessage, res: ServerResponse): void => {
      if (req.headers['x-request-id'] === 'below-the-floor') res.once('close', () => (closed = { finished: res.writableFinished }));
    };
    app.server.on('request', watch);
    // The server's writes move each time the peer has taken about a third of the send buffer (a
    // few MB on loopback): at 1 MiB/s that is well within the send timeout, which never fires.
    const slow = await throttledGet(app.port, '/books', app.token(), 2 ** 20, 'x-request-id: below-the-floor\r\n');
    try {
      const end = await until('the slow reader being cut', () => closed);
      assert.equal(end.finished, false);
      const warning = lines(app).find((l) => l.level === 40 && l.msg.includes('fell more than 5000 ms behind 8388608 bytes per second'));
      assert.ok(warning !== undefined, 'the cut is logged with its reason');
      const line = await until('the request line of the cut answer', () => requestLine(app, 'below-the-floor'));
      assert.equal(line.statusCode, 200);
      assert.equal(line.incomplete, true);
      const fast = await app.request('GET', '/books');
      assert.equal(fast.status, 200);
      assert.equal((fast.json.data as Book[]).length, BOOKS);
    } finally {
      app.server.off('request', watch);
      slow.destroy();
    }
  });

  it('a reader that takes nothing for less than the lag allowed, then reads above the floor, gets the whole list', { timeout: 60_000 }, async () => {
    // Still streaming when the floor is first checked, 5 s in: 16 MiB/s from 4.5 s on leaves most of
    // the 24 MB unsent by then, and the lag allowed is what keeps it from being cut there.
    const reader = await throttledGet(app.port, '/books', app.token(), 16 * 2 ** 20, '', 4_500);
    try {
      await until("the paused reader's connection closing", () => reader.closedAt);
      assert.equal(reader.complete, true, `the paused reader was cut after ${reader.received} bytes`);
    } finally {
      reader.destroy();
    }
  });
});

describe('a streamed answer is counted and logged when it ends, not when it starts', () => {
  let app: TestApp;
  let metrics: CatalogueMetrics;
  before(async () => {
    metrics = createMetrics();
    app = await startApp({ logLevel: 'info', metrics, catalogue: catalogue() });
  });
  after(async () => {
    metrics.close();
    await app.close();
  });

  const durationSum = (): number => {
    const series = 'http_request_duration_seconds_sum{method="GET",route="/books"} ';
    const line = metrics.registry.expose().split('\n').find((l) => l.startsWith(series));
    return line === undefined ? 0 : Number(line.slice(series.length));
  };

  it('GET /books read at 8 MiB/s: responseTime and http_request_duration_seconds cover the time it took to send', { timeout: 60_000 }, async () => {
    const before = durationSum();
    const reader = await throttledGet(app.port, '/books', app.token(), 8 * 2 ** 20, 'x-request-id: read-slowly\r\n');
    try {
      // Two of ~24 MB in: more than the socket buffers between them are still unsent, so the answer has not ended.
      await until('2 MB received', () => (reader.received >= 2 * 2 ** 20 ? true : undefined));
      const midway = performance.now();
      assert.equal(requestLine(app, 'read-slowly'), undefined, 'logged before its answer was sent');
      // Whatever the server measured runs from before the first byte to after this moment.
      const atLeastMs = midway - (reader.firstByteAt as number);
      await until('the whole list received', () => (reader.complete ? true : undefined));
      const line = await until('the request line', () => requestLine(app, 'read-slowly'));
      assert.equal(line.incomplete, undefined);
      assert.ok((line.responseTime as number) >= atLeastMs, `responseTime ${line.responseTime} ms, yet ${atLeastMs} ms passed while it was being sent`);
      assert.ok(durationSum() - before >= atLeastMs / 1000, `the histogram's sum grew by ${durationSum() - before} s`);
    } finally {
      reader.destroy();
    }
  });
});
