import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MemoryBudget, TRANSPORT_LIMITS, type Book } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { connectionCount, openConnection, openPaused, parseResponse } from './helpers/raw.ts';
import { until, within } from './helpers/wait.ts';

/*
 * Clients that send requests and never read the answers (the paused socket's receive buffer fills,
 * then the server's send buffer). The send timeout is injected (half a second instead of thirty)
 * so the file stays quick; the server code path is the same as with TRANSPORT_LIMITS.
 */
const SEND_TIMEOUT_MS = 500;
const LIMITS = { sendTimeoutMs: SEND_TIMEOUT_MS, connectionsCheckingIntervalMs: 25 } as const;
/** Slack for a loaded 2-core machine; the assertion is that the connection goes, not how fast. */
const SLACK_MS = 5_000;

const TLS_FIXTURES = new URL('./fixtures/tls/', import.meta.url);

/** Resolves once the server holds at most `n` connections (it sees its side close at once); fails naming `what` past `ms`. */
function serverConnectionsAtMost(app: TestApp, n: number, what = `the server down to ${n} connections`, ms?: number): Promise<void> {
  return until(what, async () => (await connectionCount(app.server)) <= n, ms);
}

function get(app: TestApp, path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${app.token()}\r\n\r\n`;
}

/** Books of 6 KB each: 1,500 of them make a GET /books answer (~9 MB) larger than loopback's socket buffers. */
function books(count: number): Book[] {
  return Array.from({ length: count }, (_, i) => ({ id: i + 1, title: '€'.repeat(1000), author: '€'.repeat(1000), year: 2000 }));
}
const ENVELOPE_BYTES = '{"status":200,"message":"Books retrieved successfully","data":}'.length;

async function healthy(app: TestApp): Promise<void> {
  const res = await app.request('GET', '/healthz', { auth: false });
  assert.deepEqual(res.json, { status: 200, message: 'OK', data: { status: 'ok' } });
}

describe('an answer that makes no progress ends its connection after the send timeout', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', limits: LIMITS, catalogue: books(1500) });
  });
  after(() => app.close());

  it('a client that asks for GET /books and never reads is disconnected within the bound', { timeout: 30_000 }, async () => {
    const socket = await openPaused(app.port);
    try {
      const started = performance.now();
      socket.write(get(app, '/books'));
      await serverConnectionsAtMost(app, 0, 'the connection of a client that never reads cut', SEND_TIMEOUT_MS + SLACK_MS);
      const took = performance.now() - started;
      assert.ok(took >= SEND_TIMEOUT_MS, `not before the send timeout (${Math.round(took)} ms)`);
      await healthy(app);
    } finally {
      socket.destroy();
    }
  });

  it('a client that reads in bursts, pausing for less than the send timeout, gets the whole answer', { timeout: 30_000 }, async () => {
    // A longer timeout than the other tests': on a loaded machine this client's own pauses stretch.
    // The answer (~18 MB, one write) takes longer than it to leave the process, so its progress
    // must be seen mid-write, not only when a write completes.
    const sendTimeoutMs = 1_500;
    const listBytes = Buffer.byteLength(JSON.stringify(books(3000)));
    const patient = await startApp({ logLevel: 'silent', limits: { ...LIMITS, sendTimeoutMs }, catalogue: books(3000) });
    const socket = await openPaused(patient.port);
    const chunks: Buffer[] = [];
    let length = 0;
    let wanted = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= wanted) socket.pause();
    });
    socket.write(get(patient, '/books'));
    try {
      // A burst is two megabytes: with loopback's socket buffers of a few megabytes, the server's
      // writes move once the peer has taken about a third of its send buffer.
      for (;;) {
        const parsed = parseResponse(Buffer.concat(chunks), false, false);
        if (parsed !== undefined) {
          assert.equal(parsed.response.status, 200);
          assert.equal(Buffer.byteLength(parsed.response.body), listBytes + ENVELOPE_BYTES);
          break;
        }
        assert.equal(socket.destroyed, false, `the server kept the connection (${length} bytes in)`);
        wanted = length + 2 * 2 ** 20;
        socket.resume();
        await until(`the next burst of the answer (${length} bytes in)`, () => socket.isPaused() || socket.destroyed || length >= listBytes + ENVELOPE_BYTES);
        await new Promise((resolve) => setTimeout(resolve, sendTimeoutMs / 3));
      }
    } finally {
      socket.destroy();
      await patient.close();
    }
  });

  it('when such clients fill the connection cap, a new client gets a slot within the bound', { timeout: 30_000 }, async () => {
    const capped = await startApp({ logLevel: 'silent', limits: { ...LIMITS, maxConnections: 4 }, catalogue: books(1500) });
    const stuck: Socket[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        const socket = await openPaused(capped.port);
        socket.write(get(capped, '/books'));
        stuck.push(socket);
      }
      // Refused while the cap is full (the connection is closed on arrival), served once it is not.
      const served = async (): Promise<boolean> => {
        const conn = await openConnection(capped.port);
        conn.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
        const res = await conn.response().catch(() => undefined);
        conn.destroy();
        return res?.status === 200;
      };
      await until('a new client served once the stuck ones are cut', served, SEND_TIMEOUT_MS + SLACK_MS);
    } finally {
      for (const socket of stuck) socket.destroy();
      await capped.close();
    }
  });

  it('a TLS client that asks for GET /books and never reads is disconnected within the bound', { timeout: 30_000 }, async () => {
    const tls = { cert: readFileSync(new URL('cert.pem', TLS_FIXTURES)), key: readFileSync(new URL('key.pem', TLS_FIXTURES)) };
    const secure = await startApp({ logLevel: 'silent', limits: LIMITS, tls, catalogue: books(1500) });
    const socket = await openPaused(secure.port, { servername: 'localhost', ca: readFileSync(new URL('cert.pem', TLS_FIXTURES)) });
    try {
      const started = performance.now();
      socket.write(get(secure, '/books'));
      await serverConnectionsAtMost(secure, 0, 'the connection of a TLS client that never reads cut', SEND_TIMEOUT_MS + SLACK_MS);
      const took = performance.now() - started;
      assert.ok(took >= SEND_TIMEOUT_MS, `not before the send timeout (${Math.round(took)} ms)`);
    } finally {
      socket.destroy();
      await secure.close();
    }
  });
});

describe('pipelined requests waiting for their answers are bounded per connection', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', limits: LIMITS });
  });
  after(() => app.close());

  // With a token: a request without one may not be pipelined at all (test/per-address-limits.test.ts).
  it(`${TRANSPORT_LIMITS.maxPipelinedRequests} pipelined requests with a token are all answered`, async () => {
    const conn = await openConnection(app.port);
    try {
      conn.write(get(app, '/healthz').repeat(TRANSPORT_LIMITS.maxPipelinedRequests));
      for (let i = 0; i < TRANSPORT_LIMITS.maxPipelinedRequests; i++) assert.equal((await conn.response()).status, 200);
    } finally {
      conn.destroy();
    }
  });

  it('one more than that, sent together, closes the connection without answering them all', async () => {
    const conn = await openConnection(app.port);
    const requests = TRANSPORT_LIMITS.maxPipelinedRequests + 1;
    conn.write(get(app, '/openapi.json').repeat(requests));
    let answered = 0;
    try {
      while (answered < requests) {
        await conn.response();
        answered++;
      }
    } catch {
      // closed before a complete response: what this test wants
    }
    conn.destroy();
    assert.ok(answered < requests, `${answered} of ${requests} answered`);
    await healthy(app);
  });

  it('waves of clients that pipeline 500 requests each and never read: every connection is closed and memory does not grow with their number', { timeout: 60_000 }, async () => {
    const flood = 'GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(500);
    const wave = async (clients: number): Promise<number> => {
      const sockets = await Promise.all(Array.from({ length: clients }, () => openPaused(app.port)));
      try {
        for (const socket of sockets) socket.write(flood);
        await serverConnectionsAtMost(app, 0);
      } finally {
        for (const socket of sockets) socket.destroy();
      }
      return process.memoryUsage().rss;
    };
    const first = await wave(25);
    let last = first;
    for (let i = 0; i < 3; i++) last = await wave(25);
    // Held, each client's answers (~40 KB each) would stay in memory as long as it stays connected.
    assert.ok(last < first + 64 * 2 ** 20, `RSS after 25 clients: ${Math.round(first / 2 ** 20)} MB, after 100: ${Math.round(last / 2 ** 20)} MB`);
    await healthy(app);
  });
});

describe('answers in flight are charged to the memory budget (answers_in_flight)', () => {
  // The send timeout is out of the way: what ends these connections is the budget.
  const PATIENT = { ...LIMITS, sendTimeoutMs: 120_000 };

  it('what the answer of a client that stopped reading holds is counted, and nothing once the connection is gone', { timeout: 30_000 }, async () => {
    const budget = new MemoryBudget(1 << 30);
    const app = await startApp({ logLevel: 'silent', limits: PATIENT, memoryBudget: budget, catalogue: books(1500) });
    const socket = await openPaused(app.port);
    try {
      socket.write(get(app, '/books'));
      await until('the stalled answer charged', () => budget.heldBy('answers_in_flight') > 0);
      socket.destroy();
      await until('its charge released', () => budget.heldBy('answers_in_flight') === 0);
    } finally {
      socket.destroy();
      await app.close();
    }
  });

  it('the answers Node holds for requests pipelined behind a stalled one are counted too', { timeout: 30_000 }, async () => {
    const budget = new MemoryBudget(1 << 30);
    const app = await startApp({ logLevel: 'silent', limits: PATIENT, memoryBudget: budget, catalogue: books(1500) });
    const socket = await openPaused(app.port);
    const behind = TRANSPORT_LIMITS.maxPipelinedRequests - 1;
    try {
      const documentBytes = Buffer.byteLength((await app.request('GET', '/openapi.json', { auth: false })).text);
      socket.write(get(app, '/books') + get(app, '/openapi.json').repeat(behind));
      // The stalled list holds one streamed piece (64 KiB); the rest is the documents waiting their turn.
      await until(`${behind} documents held behind the stalled list charged`, () => budget.heldBy('answers_in_flight') > behind * documentBytes);
    } finally {
      socket.destroy();
      await app.close();
    }
  });

  it('answers are charged as they are written: pipelined large answers are shed before any check of the connections', { timeout: 30_000 }, async () => {
    // No check of the connections runs during the test: only the charge each write makes can shed.
    const unchecked = { ...PATIENT, connectionsCheckingIntervalMs: 3_600_000 };
    let shed = (): void => {};
    const shedding = new Promise<void>((resolve) => (shed = resolve));
    // MEMORY_BUDGET_MB=1: far less than what the answers leave in user space once loopback's buffers are full.
    const budget = new MemoryBudget(2 ** 20, { onShed: (kind) => kind === 'answers_in_flight' && shed() });
    const app = await startApp({ logLevel: 'silent', limits: unchecked, memoryBudget: budget, catalogue: books(1500) });
    const socket = await openPaused(app.port);
    try {
      // A page of 1,000 books (6 MB) is written at once, not streamed.
      socket.write(get(app, '/books?limit=1000').repeat(TRANSPORT_LIMITS.maxPipelinedRequests));
      await within('the connection shed by the memory budget as its answers were written', shedding);
      await serverConnectionsAtMost(app, 0);
      assert.equal(budget.heldBy('answers_in_flight'), 0);
      await healthy(app);
    } finally {
      socket.destroy();
      await app.close();
    }
  });

  it('once the budget is spent, the connection whose answer moves least is reset and the service goes on', { timeout: 30_000 }, async () => {
    // Less than one streamed piece of GET /books: a stalled reader's answer spends it.
    const budget = new MemoryBudget(32 * 1024);
    const app = await startApp({ logLevel: 'silent', limits: PATIENT, memoryBudget: budget, catalogue: books(1500) });
    const socket = await openPaused(app.port);
    try {
      socket.write(get(app, '/books'));
      await until('the connection shed by the memory budget', () => budget.shedCount('answers_in_flight') === 1);
      await serverConnectionsAtMost(app, 0);
      assert.equal(budget.heldBy('answers_in_flight'), 0);
      await healthy(app);
    } finally {
      socket.destroy();
      await app.close();
    }
  });
});
