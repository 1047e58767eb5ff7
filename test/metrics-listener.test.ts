import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createLogger, createMetricsServer, listen, MemoryBudget, METRICS_LIMITS, Registry, type MetricsServer, type MetricsServerOptions } from '../src/index.ts';
import { promtoolCheck } from './helpers/promtool.ts';
import { connectionCount, openConnection, openPaused, rawRequest, rawRequestThenClose, type RawConnection } from './helpers/raw.ts';
import { needs } from './helpers/system-tools.ts';
import { until, within } from './helpers/wait.ts';

/*
 * The metrics listener through real HTTP: its answers, and the service's transport bounds with its
 * own limits (SECURITY.md, "Limits"; docs/operations.md, "Metrics"). On Linux every 127.x.y.z is
 * loopback, so a client binding 127.0.0.2 is another address.
 */

const EXPOSITION_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const SCRAPE = 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

interface Listening {
  server: MetricsServer;
  port: number;
  close(): Promise<void>;
}

async function startListener(registry: Registry, options: MetricsServerOptions = {}): Promise<Listening> {
  const server = createMetricsServer(registry, options);
  const { port } = await listen(server, 0, '127.0.0.1');
  return { server, port, close: async () => void (await server.shutdown(0)) };
}

/** A registry with one small family, whose text promtool can check. */
function smallRegistry(): Registry {
  const registry = new Registry();
  registry.counter('test_scrapes_total', 'Scrapes of the test registry.').inc();
  return registry;
}

/** A registry whose text (about 9 MB) outlasts loopback's socket buffers, so a client that stops reading holds its answer. */
function largeRegistry(): Registry {
  const registry = new Registry();
  const samples = Array.from({ length: 60_000 }, (_, i) => ({ labels: [`${i}-${'x'.repeat(120)}`], value: i }));
  registry.collect({ name: 'test_padding', help: 'Padding.', type: 'gauge', labelNames: ['n'], read: () => samples });
  return registry;
}

/** A connection the listener closes on arrival: resolves once it is closed (a paused or reset one is noticed too). */
function closedOnArrival(port: number, localAddress: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.on('error', () => {});
    socket.once('close', () => resolve());
  });
}

/** A keep-alive connection that has had one answer (to HEAD: no body to read): the listener holds it open. */
async function answeredConnection(port: number, localAddress?: string): Promise<RawConnection> {
  const conn = await openConnection(port, localAddress);
  conn.write('HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  assert.equal((await conn.response({ head: true })).status, 200);
  return conn;
}

describe('the metrics listener: its answers carry the service\'s headers', () => {
  const lines: Record<string, unknown>[] = [];
  let l: Listening;
  before(async () => {
    const logger = createLogger({ write: (line) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    l = await startListener(smallRegistry(), { allowedHosts: ['127.0.0.1'], logger });
  });
  after(() => l.close());

  it('GET /metrics: the exposition with Content-Length (not chunked), no-store, nosniff and the request id', async () => {
    const res = await rawRequest(l.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: scrape-1\r\n\r\n');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], EXPOSITION_TYPE);
    assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
    assert.equal(res.headers['transfer-encoding'], undefined);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['x-request-id'], 'scrape-1');
    assert.match(res.body, /^test_scrapes_total 1$/m);
  });

  it('promtool check metrics accepts what the listener sends', needs('promtool'), async () => {
    const res = await rawRequest(l.port, SCRAPE);
    const verdict = promtoolCheck(res.body);
    assert.equal(verdict.status, 0, verdict.output);
  });

  it('HEAD /metrics: the same head, Content-Length included, and no body', async () => {
    const conn = await openConnection(l.port);
    try {
      // The GET behind it parses only if the HEAD answer carried no body.
      conn.write('HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const head = await conn.response({ head: true });
      conn.write(SCRAPE);
      const get = await conn.response();
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-type'], EXPOSITION_TYPE);
      assert.ok(Number(head.headers['content-length']) > 0, head.headers['content-length']);
      assert.equal(head.headers['x-content-type-options'], 'nosniff');
      assert.equal(head.headers['cache-control'], 'no-store');
      assert.equal(get.status, 200);
      assert.match(get.body, /^test_scrapes_total 1$/m);
    } finally {
      conn.destroy();
    }
  });

  const refusals = [
    { name: 'another path is 404 Not found', request: 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', status: 404, message: 'Not found' },
    { name: 'another method is 405 Method not allowed, with Allow', request: 'POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n', status: 405, message: 'Method not allowed' },
    { name: 'a host it does not answer for is 421 Misdirected request, before the path', request: 'GET /nowhere HTTP/1.1\r\nHost: evil.example\r\n\r\n', status: 421, message: 'Misdirected request' },
  ];
  for (const row of refusals) {
    it(`${row.name}, in the envelope, with the same headers`, async () => {
      const res = await rawRequest(l.port, row.request);
      assert.equal(res.status, row.status);
      assert.deepEqual(res.json, { status: row.status, message: row.message, data: null });
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(res.headers['content-length'], String(Buffer.byteLength(res.body)));
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.match(res.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
      if (row.status === 405) assert.equal(res.headers.allow, 'GET, HEAD');
    });
  }

  it('an HTTP/1.1 request without Host is 400 Bad request in the envelope, and its connection closes', async () => {
    const res = await rawRequestThenClose(l.port, 'GET /metrics HTTP/1.1\r\n\r\n');
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, { status: 400, message: 'Bad request', data: null });
  });

  it('each answer writes a request line that names the listener', async () => {
    lines.length = 0;
    await rawRequest(l.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: scrape-2\r\n\r\n');
    const line = lines.find((entry) => entry.reqId === 'scrape-2');
    assert.ok(line !== undefined, JSON.stringify(lines));
    assert.equal(line.listener, 'metrics');
    assert.equal(line.msg, 'request');
    assert.equal(line.path, '/metrics');
    assert.equal(line.statusCode, 200);
  });
});

describe('the metrics listener: the service\'s transport bounds, with its own limits', () => {
  it('a request pipelined behind another resets the connection: scrapers never pipeline', async () => {
    const l = await startListener(smallRegistry());
    try {
      const conn = await openConnection(l.port);
      try {
        conn.write(SCRAPE.repeat(2));
        await within('the connection that pipelined two scrapes is closed', conn.closed);
      } finally {
        conn.destroy();
      }
      assert.equal((await rawRequest(l.port, SCRAPE)).status, 200, 'the listener serves the next client');
    } finally {
      await l.close();
    }
  });

  it('limits.maxPipelinedRequests: 3 pipelined scrapes are answered, a fourth sent with them resets the connection', async () => {
    const l = await startListener(smallRegistry(), { limits: { maxPipelinedRequests: 3 } });
    const [within3, over] = [await openConnection(l.port), await openConnection(l.port)];
    try {
      within3.write(SCRAPE.repeat(3));
      for (let i = 0; i < 3; i++) assert.equal((await within3.response()).status, 200);
      over.write(SCRAPE.repeat(4));
      await within('the connection that pipelined four scrapes is closed', over.closed);
    } finally {
      within3.destroy();
      over.destroy();
      await l.close();
    }
  });

  it('a client that asks for /metrics and never reads is cut off by the send timeout', { timeout: 60_000 }, async () => {
    const l = await startListener(largeRegistry(), { limits: { sendTimeoutMs: 300, connectionsCheckingIntervalMs: 25 } });
    const socket = await openPaused(l.port);
    try {
      socket.write(SCRAPE);
      // A paused client notices nothing: the listener's side is where the connection goes.
      await until('the connection whose answer made no progress is closed', async () => (await connectionCount(l.server)) === 0);
    } finally {
      socket.destroy();
      await l.close();
    }
  });

  it('what a stalled scrape holds is charged to the memory budget given (answers_in_flight), and released with its connection', { timeout: 60_000 }, async () => {
    const budget = new MemoryBudget(1 << 30);
    const l = await startListener(largeRegistry(), { memoryBudget: budget, limits: { connectionsCheckingIntervalMs: 25 } });
    const socket = await openPaused(l.port);
    try {
      socket.write(SCRAPE);
      await until('the stalled answer is charged', () => budget.heldBy('answers_in_flight') > 0);
      socket.destroy();
      await until('its charge is released', () => budget.heldBy('answers_in_flight') === 0);
    } finally {
      socket.destroy();
      await l.close();
    }
  });

  it(`at most ${METRICS_LIMITS.maxConnectionsPerAddress} connections from one address; another address still gets in`, async () => {
    const l = await startListener(smallRegistry());
    const open: RawConnection[] = [];
    try {
      for (let i = 0; i < METRICS_LIMITS.maxConnectionsPerAddress; i++) open.push(await answeredConnection(l.port));
      await within('one connection too many from 127.0.0.1 is closed on arrival', closedOnArrival(l.port, '127.0.0.1'));
      const other = await answeredConnection(l.port, '127.0.0.2');
      open.push(other);
    } finally {
      for (const conn of open) conn.destroy();
      await l.close();
    }
  });

  it('the connection cap (limits.maxConnections) closes one more on arrival', async () => {
    const l = await startListener(smallRegistry(), { limits: { maxConnections: 2, maxConnectionsPerAddress: 0, maxInFlightPerAddress: 0 } });
    const open: RawConnection[] = [];
    try {
      open.push(await answeredConnection(l.port), await answeredConnection(l.port, '127.0.0.2'));
      await within('the connection past the cap is closed on arrival', closedOnArrival(l.port, '127.0.0.3'));
    } finally {
      for (const conn of open) conn.destroy();
      await l.close();
    }
  });

  it('shutdown(): an idle connection and a stalled scrape are closed, and nothing new is accepted', { timeout: 60_000 }, async () => {
    const registry = largeRegistry();
    let scrapes = 0;
    registry.onScrape(() => scrapes++);
    const l = await startListener(registry, { limits: { sendTimeoutMs: 120_000 } });
    const idle = await answeredConnection(l.port);
    const stalled = await openPaused(l.port);
    try {
      stalled.write(SCRAPE);
      // Its answer is being written once the registry has been read for it.
      await until('the stalled client\'s scrape is served', () => scrapes === 2);
      // It resolves once the listener is closed, every connection with it.
      await within('shutdown resolves', l.server.shutdown());
      assert.equal(await connectionCount(l.server), 0);
      await within('the idle connection is closed', idle.closed);
      await assert.rejects(openConnection(l.port), /ECONNREFUSED/);
    } finally {
      idle.destroy();
      stalled.destroy();
      // Only when shutdown() failed: the test must not hold the file open.
      l.server.close();
      l.server.closeAllConnections();
    }
  });
});
