import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { coalescingWindow, EVENT_STREAM_DEFAULTS, FANOUT_SHARE, StreamRegistry, type EventStreamOptions } from '../src/events/stream-registry.ts';
import { silentLogger } from '../src/log.ts';
import { DEFAULT_MEMORY_BUDGET_BYTES, MemoryBudget } from '../src/memory/budget.ts';
import { ChangeLog } from '../src/store/change-log.ts';
import type { ChangeEntry } from '../src/store/change.ts';

/**
 * The fan-out of GET /events (docs/contract.md, "Change feed"): the registry on a real HTTP server, fed by a ChangeLog the
 * test appends to as the store does once a batch is durable. The client reads the raw chunked body,
 * so each HTTP chunk is one `write()` of the service and the tests can count them.
 */

const entry = (seq: number, bookJson = `{"id":${seq}}`): ChangeEntry => ({ seq, type: 'created', id: seq, bookJson });
const batch = (from: number, to: number): ChangeEntry[] => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

interface Fixture {
  feed: ChangeLog;
  registry: StreamRegistry;
  port: number;
  close(): Promise<void>;
}

/**
 * A server whose every request is a stream; `?since=` resumes. `monotonic`: the coalescing window's
 * clock; `budget`: the memory budget the streams report to.
 */
async function serve(options: Partial<EventStreamOptions>, monotonic?: () => number, budget = new MemoryBudget(DEFAULT_MEMORY_BUDGET_BYTES)): Promise<Fixture> {
  const feed = new ChangeLog(0, [], () => {});
  const registry = new StreamRegistry(feed, { ...EVENT_STREAM_DEFAULTS, heartbeatMs: 600_000, ...options }, silentLogger, Date.now, budget, monotonic);
  const server: Server = createServer((req, res) => {
    const since = new URL(req.url as string, 'http://x').searchParams.get('since');
    registry.open(req, res, 'test', undefined, since === null ? undefined : Number(since), Math.floor(Date.now() / 1000) + 3600);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    feed,
    registry,
    port: (server.address() as { port: number }).port,
    close: async () => {
      registry.closeAll();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

interface RawStream {
  /** The body's HTTP chunks as received, one per write of the service. */
  chunks: string[];
  socket: Socket;
  /** The seqs of the change frames received so far, in order. */
  seqs(): number[];
  /** Resolves once a change frame with `seq` has arrived; rejects if the connection closes first. */
  until(seq: number): Promise<void>;
}

/**
 * Opens a stream over a raw socket and decodes its chunked body (RFC 9112 §7.1). Resolves once the
 * head has arrived: the registry writes it as it registers the stream. `requests` > 1 pipelines
 * that many on the connection; only the first one's answer is decoded.
 */
async function openRaw(port: number, query = '', requests = 1): Promise<RawStream> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(`GET /events${query} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(requests));
  const chunks: string[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  let headDone = false;
  let headArrived: () => void = () => {};
  const head = new Promise<void>((r) => (headArrived = r));
  socket.setEncoding('latin1').on('data', (data: string) => {
    buffer += data;
    if (!headDone) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      assert.match(buffer.slice(0, end), /\r\ntransfer-encoding: chunked/i);
      headDone = true;
      headArrived();
      buffer = buffer.slice(end + 4);
    }
    for (;;) {
      const line = buffer.indexOf('\r\n');
      if (line === -1) break;
      const size = parseInt(buffer.slice(0, line), 16);
      if (buffer.length < line + 2 + size + 2) break;
      const chunk = Buffer.from(buffer.slice(line + 2, line + 2 + size), 'latin1').toString('utf8');
      // The stream's first write is its `retry:` field; the tests count the frames' writes.
      if (!(chunks.length === 0 && chunk === `retry: ${EVENT_STREAM_DEFAULTS.retryMs}\n\n`)) chunks.push(chunk);
      buffer = buffer.slice(line + 2 + size + 2);
    }
    for (const check of [...waiters]) check();
  });
  socket.on('close', () => {
    for (const check of [...waiters]) check();
  });
  const stream: RawStream = {
    chunks,
    socket,
    seqs: () => [...chunks.join('').matchAll(/^id: (\d+)\nevent: created\ndata: \{"seq":(\d+),/gm)].map((m) => (assert.equal(m[1], m[2]), Number(m[1]))),
    until: (seq) =>
      new Promise((resolve, reject) => {
        const check = (): void => {
          if (stream.seqs().includes(seq) && waiters.delete(check)) resolve();
          else if (socket.closed && waiters.delete(check)) reject(new Error(`the stream closed before seq ${seq}`));
        };
        waiters.add(check);
        check();
      }),
  };
  await head;
  return stream;
}

/** The frames a stream must receive for `seqs`, byte for byte. */
const framesOf = (seqs: number[]): string => seqs.map((seq) => `id: ${seq}\nevent: created\ndata: {"seq":${seq},"type":"created","id":${seq},"book":{"id":${seq}}}\n\n`).join('');
const seqRange = (from: number, to: number): number[] => batch(from, to).map((e) => e.seq);

describe('GET /events fan-out: changes are coalesced into one write per stream', () => {
  let fx: Fixture;
  before(async () => {
    fx = await serve({ coalesceMs: 1000 });
  });
  after(() => fx.close());

  it('batches made durable in one turn reach each stream as one write, every frame intact and in seq order', async () => {
    const live = await openRaw(fx.port);
    const resumed = await openRaw(fx.port, '?since=0');
    fx.feed.append(batch(1, 3));
    fx.feed.append(batch(4, 4));
    fx.feed.append(batch(5, 9));
    await Promise.all([live.until(9), resumed.until(9)]);
    for (const stream of [live, resumed]) assert.deepEqual(stream.chunks, [framesOf(seqRange(1, 9))]);
    live.socket.destroy();
    resumed.socket.destroy();
  });

  it('batches of later turns within the window go out together once it ends; a stream that resumed meanwhile gets each change once', async () => {
    // The window counts from the previous test's send: 10 may wait for it; 11–12 wait for 10's.
    const first = await openRaw(fx.port);
    fx.feed.append(batch(10, 10));
    await first.until(10);
    fx.feed.append(batch(11, 12));
    await turn();
    // Opened while 11–12 wait for the window: it reads them from retention, then 13 on both.
    const resumed = await openRaw(fx.port, '?since=5');
    fx.feed.append(batch(13, 14));
    await Promise.all([first.until(14), resumed.until(14)]);
    assert.deepEqual(first.chunks, [framesOf([10]), framesOf(seqRange(11, 14))]);
    assert.deepEqual(resumed.seqs(), seqRange(6, 14));
    first.socket.destroy();
    resumed.socket.destroy();
  });
});

describe('GET /events fan-out: the window stretches with what a send costs', () => {
  it('is coalesceMs while sends are cheap, FANOUT_SHARE times the last send when that is longer, at most maxCoalesceMs', () => {
    const options = { coalesceMs: 5, maxCoalesceMs: 25 };
    assert.equal(coalescingWindow(options, 0.1), 5);
    assert.equal(coalescingWindow(options, 2), 2 * FANOUT_SHARE);
    assert.equal(coalescingWindow(options, 50), 25);
    assert.equal(coalescingWindow({ coalesceMs: 1000, maxCoalesceMs: 25 }, 50), 1000, 'coalesceMs is the floor whatever the cap');
  });

  it('after a send that took long, batches of later turns wait and go out together', async () => {
    // A slow machine: every read of the clock is 10 ms after the previous one, so the first send
    // (from its start to the tick after its writes) takes 10 ms and the next window is FANOUT_SHARE × 10 ms.
    let now = 0;
    const fx = await serve({ coalesceMs: 0, maxCoalesceMs: 10_000 }, () => (now += 10));
    const stream = await openRaw(fx.port);
    try {
      fx.feed.append(batch(1, 1));
      await stream.until(1);
      fx.feed.append(batch(2, 2));
      await turn();
      fx.feed.append(batch(3, 3));
      await stream.until(3);
      assert.deepEqual(stream.chunks, [framesOf([1]), framesOf([2, 3])]);
    } finally {
      stream.socket.destroy();
      await fx.close();
    }
  });
});

describe('GET /events fan-out: an HTTP/1.0 client', () => {
  it('gets the frames as they are, no chunk framing (HTTP/1.0 has none), the body ending with the connection', async () => {
    const fx = await serve({ coalesceMs: 0 });
    const socket = connect(fx.port, '127.0.0.1');
    try {
      let text = '';
      const received = (part: string): Promise<void> =>
        new Promise((resolve) => {
          const check = (): void => {
            if (text.includes(part) && socket.off('data', check)) resolve();
          };
          socket.on('data', check);
          check();
        });
      socket.setEncoding('utf8').on('data', (data: string) => (text += data));
      socket.write('GET /events HTTP/1.0\r\n\r\n');
      await received('\r\n\r\n');
      fx.feed.append(batch(1, 2));
      fx.feed.append(batch(3, 3));
      await received(framesOf([3]));
      const [head, body] = text.split('\r\n\r\n') as [string, string];
      assert.doesNotMatch(head, /transfer-encoding/i);
      assert.equal(body, `retry: ${EVENT_STREAM_DEFAULTS.retryMs}\n\n${framesOf(seqRange(1, 3))}`);
    } finally {
      socket.destroy();
      await fx.close();
    }
  });
});

/**
 * With two streams open, appends 16 KiB changes (each once `reader` has it) until one stream is cut,
 * at most `rounds`, then one more: the cut happened, and `reader` got every change once, in order.
 */
async function appendUntilCut(fx: Fixture, reader: RawStream, rounds: number, cut: string): Promise<void> {
  const book = JSON.stringify({ id: 0, title: 'x'.repeat(16 * 1024) });
  let seq = 0;
  for (let round = 0; round < rounds && fx.registry.size === 2; round++) {
    fx.feed.append([entry(++seq, book)]);
    await reader.until(seq);
  }
  assert.equal(fx.registry.size, 1, cut);
  fx.feed.append([entry(++seq, book)]);
  await reader.until(seq);
  assert.deepEqual(reader.seqs(), seqRange(1, seq));
}

describe('GET /events fan-out: a stream pipelined behind another on one connection', () => {
  it('is written through its response, which holds the frames for its turn: cut past the bound, the first stream unharmed', async () => {
    const fx = await serve({ coalesceMs: 0, maxUnsentBytes: 64 * 1024 });
    const first = await openRaw(fx.port, '', 2);
    try {
      for (let i = 0; i < 1000 && fx.registry.size < 2; i++) await turn();
      assert.equal(fx.registry.size, 2, 'both pipelined streams are open');
      await appendUntilCut(fx, first, 100, 'the queued stream was cut');
    } finally {
      first.socket.destroy();
      await fx.close();
    }
  });
});

describe('GET /events fan-out: streams and the memory budget (event_streams)', () => {
  it('a stream that does not read is charged what it owes; once that spends the budget it is shed, before its own bound, and the reader gets every change', async () => {
    // Below maxUnsentBytes (1 MiB by default): the budget, not the stream's own bound, cuts it.
    const budget = new MemoryBudget(256 * 1024);
    const fx = await serve({ coalesceMs: 0 }, undefined, budget);
    const reader = await openRaw(fx.port);
    const stalled = await openRaw(fx.port);
    stalled.socket.pause();
    try {
      await appendUntilCut(fx, reader, 2000, 'the stalled stream was shed');
      assert.equal(budget.shedCount('event_streams'), 1);
    } finally {
      reader.socket.destroy();
      stalled.socket.destroy();
      await fx.close();
    }
    assert.equal(budget.heldBy('event_streams'), 0, 'every stream gave its charge back');
  });
});

describe('GET /events fan-out: a stream that does not read', () => {
  it('is cut once its unsent frames pass the bound, while the reading stream gets every change once, in order', async () => {
    const fx = await serve({ coalesceMs: 0, maxUnsentBytes: 64 * 1024 });
    const reader = await openRaw(fx.port);
    const stalled = await openRaw(fx.port);
    stalled.socket.pause();
    try {
      // Bounded: the stalled socket's buffers fill (a few MB on loopback), then 64 KiB more cuts it.
      await appendUntilCut(fx, reader, 2000, 'the stalled stream was cut');
    } finally {
      reader.socket.destroy();
      stalled.socket.destroy();
      await fx.close();
    }
  });
});
