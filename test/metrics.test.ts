import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Server as NetServer, Socket as NetSocket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { REFUSED_LOG_INTERVAL_MS, watchConnections } from '../src/transport/connection-events.ts';
import { createLogger, createMetrics, createMetricsServer, listen, MemoryBudget, type CatalogueMetrics } from '../src/index.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type StartOptions, type TestApp } from './helpers/app.ts';
import { promtoolCheck } from './helpers/promtool.ts';
import { openConnection } from './helpers/raw.ts';
import { ioError, recordingFs } from './helpers/recording-fs.ts';
import { needs } from './helpers/system-tools.ts';
import { within } from './helpers/wait.ts';

interface Observed {
  app: TestApp;
  metrics: CatalogueMetrics;
  metricsUrl: string;
  scrape(): Promise<string>;
  close(): Promise<void>;
}

/** The service with metrics on, and its metrics listener on its own ephemeral port. */
async function startObserved(options: StartOptions = {}): Promise<Observed> {
  const metrics = createMetrics();
  const app = await startApp({ ...options, metrics });
  const listener = createMetricsServer(metrics.registry);
  const { port } = await listen(listener, 0, '127.0.0.1');
  const metricsUrl = `http://127.0.0.1:${port}`;
  return {
    app,
    metrics,
    metricsUrl,
    scrape: async () => (await fetch(`${metricsUrl}/metrics`)).text(),
    async close() {
      listener.close();
      listener.closeAllConnections();
      metrics.close();
      await app.close();
    },
  };
}

/** The value of one series, written exactly as exposed (`name{a="b"}`); 0 when absent. */
function value(text: string, series: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

/** Every label value of `label` on the samples of `name`. */
function labelValues(text: string, name: string, label: string): Set<string> {
  const found = new Set<string>();
  const re = new RegExp(`^${name}\\{[^}]*${label}="((?:[^"\\\\]|\\\\.)*)"`);
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (m !== null) found.add(m[1] as string);
  }
  return found;
}

/** Polls a scrape until `ready` holds: a bounded wait for background work (a compaction). */
async function scrapeUntil(o: Observed, ready: (text: string) => boolean): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const text = await o.scrape();
    if (ready(text)) return text;
    await new Promise((r) => setImmediate(r));
  }
  return o.scrape();
}

describe('metrics: the listener', () => {
  let o: Observed;
  before(async () => {
    o = await startObserved();
  });
  after(() => o.close());

  it('GET /metrics answers 200 in text/plain; version=0.0.4; charset=utf-8', async () => {
    const res = await fetch(`${o.metricsUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    assert.match(await res.text(), /^# HELP http_requests_total /m);
  });

  it('serves nothing else: another path is 404, another method 405', async () => {
    assert.equal((await fetch(`${o.metricsUrl}/`)).status, 404);
    assert.equal((await fetch(`${o.metricsUrl}/books`)).status, 404);
    const post = await fetch(`${o.metricsUrl}/metrics`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('the public port answers 404 Not found at /metrics', async () => {
    const res = await o.app.request('GET', '/metrics', { auth: false });
    assert.equal(res.status, 404);
    assert.deepEqual(res.json, { status: 404, message: 'Not found', data: null });
  });
});

describe('metrics: each family moves with the traffic that should move it', () => {
  let o: Observed;
  before(async () => {
    o = await startObserved({ loginMaxFailures: 2 });
  });
  after(() => o.close());

  it('http_requests_total counts by method, route pattern and status; the duration histogram by method and route', async () => {
    const created = await o.app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 2000 } });
    const id = (created.json.data as { id: number }).id;
    const before = await o.scrape();
    await o.app.request('GET', `/book/${id}`);
    await o.app.request('GET', `/book/${id}`);
    await o.app.request('GET', '/book/999999');
    await o.app.request('GET', '/no/such/path', { auth: false });
    await o.app.request('PATCH', '/books');
    const text = await o.scrape();
    const delta = (series: string): number => value(text, series) - value(before, series);
    assert.equal(delta('http_requests_total{method="GET",route="/book/{id}",status="200"}'), 2);
    assert.equal(delta('http_requests_total{method="GET",route="/book/{id}",status="404"}'), 1);
    assert.equal(delta('http_requests_total{method="GET",route="unmatched",status="404"}'), 1);
    assert.equal(delta('http_requests_total{method="PATCH",route="/books",status="405"}'), 1);
    assert.equal(value(text, 'http_requests_total{method="POST",route="/book",status="201"}'), 1);
    assert.equal(delta('http_request_duration_seconds_count{method="GET",route="/book/{id}"}'), 3);
    assert.equal(delta('http_request_duration_seconds_bucket{method="GET",route="/book/{id}",le="+Inf"}'), 3);
    assert.ok(labelValues(text, 'http_requests_total', 'route').has('/book/{id}'));
  });

  it('a write moves the commit, record, fsync, book and journal figures', async () => {
    const before = await o.scrape();
    const res = await o.app.request('POST', '/book', { body: { title: 'Durable', author: 'A', year: 1 } });
    assert.equal(res.status, 201);
    const text = await o.scrape();
    const delta = (series: string): number => value(text, series) - value(before, series);
    assert.equal(delta('book_catalogue_commits_total'), 1);
    assert.equal(delta('book_catalogue_commit_records_count'), 1);
    assert.equal(delta('book_catalogue_commit_records_sum'), 1);
    assert.equal(delta('book_catalogue_fsync_duration_seconds_count'), 1);
    assert.ok(delta('book_catalogue_fsync_duration_seconds_sum') > 0);
    assert.equal(delta('book_catalogue_books'), 1);
    assert.ok(delta('book_catalogue_journal_bytes') > 0);
  });

  it('a failed login, then a throttled one, move their counters', async () => {
    const before = await o.scrape();
    const attempt = (): Promise<{ status: number }> => o.app.request('POST', '/token', { auth: false, body: { username: TEST_USER, password: 'wrong' } });
    assert.equal((await attempt()).status, 401);
    assert.equal((await attempt()).status, 401);
    assert.equal((await attempt()).status, 429);
    const text = await o.scrape();
    assert.equal(value(text, 'book_catalogue_login_failures_total') - value(before, 'book_catalogue_login_failures_total'), 2);
    assert.equal(value(text, 'book_catalogue_logins_throttled_total') - value(before, 'book_catalogue_logins_throttled_total'), 1);
  });

  it('refused tokens are counted by a small fixed set of reasons', async () => {
    const before = await o.scrape();
    await o.app.request('GET', '/books', { auth: false });
    await o.app.request('GET', '/books', { headers: { authorization: 'not-a-token' } });
    await o.app.request('GET', '/books', { headers: { authorization: signToken(TEST_USER, Buffer.from('another-secret-that-is-32-bytes-long!!'), Date.now() / 1000) } });
    await o.app.request('GET', '/books', { headers: { authorization: signToken(TEST_USER, Buffer.from(TEST_SECRET), Date.now() / 1000 - 3600) } });
    const text = await o.scrape();
    for (const reason of ['missing', 'malformed', 'bad_signature', 'expired']) {
      const series = `book_catalogue_tokens_rejected_total{reason="${reason}"}`;
      assert.equal(value(text, series) - value(before, series), 1, reason);
    }
    assert.deepEqual([...labelValues(text, 'book_catalogue_tokens_rejected_total', 'reason')].sort(), ['bad_signature', 'expired', 'malformed', 'missing', 'not_yet_valid']);
  });

  it('no secret, password, token or client-typed name reaches the output', async () => {
    const token = o.app.token();
    await o.app.request('GET', '/books', { headers: { authorization: token } });
    await o.app.request('POST', '/token', { auth: false, body: { username: 'mallory-typed-this', password: 'hunter2-typed-this' } });
    await o.app.request('GET', '/book/424242?secret=query-typed-this', { auth: false });
    const text = await o.scrape();
    for (const secret of [TEST_SECRET, TEST_PASSWORD, token, token.split('.')[2] as string, 'mallory-typed-this', 'hunter2-typed-this', 'query-typed-this', '424242']) {
      assert.ok(!text.includes(secret), `the output holds ${secret}`);
    }
  });

  it('promtool check metrics accepts the output after all that traffic', needs('promtool'), async () => {
    const verdict = promtoolCheck(await o.scrape());
    assert.equal(verdict.status, 0, verdict.output);
    assert.equal(verdict.output, '');
  });
});

describe('metrics: route labels stay bounded under a scan of random paths', () => {
  let o: Observed;
  before(async () => {
    o = await startObserved();
  });
  after(() => o.close());

  it('1,000 random paths and methods leave only route patterns, `unmatched` and known methods as labels', async () => {
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'MKCOL', 'PURGE'];
    let seed = 12345;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let i = 0; i < 1000; i++) {
      const path = next(3) === 0 ? `/book/${next(1e9)}` : `/${next(1e9).toString(36)}/${next(1e9)}${next(2) === 0 ? '/' : ''}`;
      const conn = await openConnection(o.app.port);
      conn.write(`${methods[next(methods.length)]} ${path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n`);
      await conn.response().catch(() => undefined);
      conn.destroy();
    }
    const text = await o.scrape();
    const patterns = new Set([...o.app.server.app.routes().map((r) => r.pattern), 'unmatched']);
    for (const route of labelValues(text, 'http_requests_total', 'route')) assert.ok(patterns.has(route), `route label ${route}`);
    for (const route of labelValues(text, 'http_request_duration_seconds_count', 'route')) assert.ok(patterns.has(route), `route label ${route}`);
    const known = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'other']);
    for (const method of labelValues(text, 'http_requests_total', 'method')) assert.ok(known.has(method), `method label ${method}`);
    const series = text.split('\n').filter((l) => l.startsWith('http_requests_total{')).length;
    assert.ok(series < 40, `${series} series`);
    assert.ok(value(text, 'http_requests_total{method="other",route="unmatched",status="404"}') > 0);
  });
});

describe('metrics: book_catalogue_event_streams', () => {
  it('is absent until a stream source is attached, then read at every scrape', () => {
    const metrics = createMetrics();
    try {
      assert.doesNotMatch(metrics.registry.expose(), /book_catalogue_event_streams/);
      let open = 3;
      metrics.watchEventStreams(() => open);
      assert.match(metrics.registry.expose(), /^# TYPE book_catalogue_event_streams gauge\nbook_catalogue_event_streams 3$/m);
      open = 0;
      assert.match(metrics.registry.expose(), /^book_catalogue_event_streams 0$/m);
    } finally {
      metrics.close();
    }
  });

  it('counts the GET /events streams the app holds open', async () => {
    const o = await startObserved({ logLevel: 'warn' });
    try {
      const stream = await fetch(`${o.app.url}/events`, { headers: { authorization: o.app.token() } });
      assert.equal(stream.status, 200);
      assert.match(await o.scrape(), /^book_catalogue_event_streams 1$/m);
      await stream.body?.cancel();
    } finally {
      await o.close();
    }
  });
});

describe('metrics: the memory budget', () => {
  it('exposes the limit, what each consumer holds and how many were shed, read at every scrape', () => {
    const metrics = createMetrics();
    try {
      const budget = new MemoryBudget(1000, { now: () => 1000 });
      metrics.watchMemoryBudget(budget);
      const stalled = budget.add({ kind: 'list_snapshots', moved: () => 0, shed: () => stalled.release() });
      budget.add({ kind: 'event_streams', moved: () => 0, shed: () => undefined }).set(200);
      let text = metrics.registry.expose();
      assert.match(text, /^# TYPE book_catalogue_memory_budget_bytes gauge\nbook_catalogue_memory_budget_bytes 1000$/m);
      assert.match(text, /^book_catalogue_memory_held_bytes\{consumer="event_streams"\} 200$/m);
      assert.match(text, /^book_catalogue_memory_held_bytes\{consumer="list_snapshots"\} 0$/m);
      stalled.set(900);
      text = metrics.registry.expose();
      assert.match(text, /^# TYPE book_catalogue_memory_shed_total counter$/m);
      assert.match(text, /^book_catalogue_memory_shed_total\{consumer="list_snapshots"\} 1$/m);
      assert.match(text, /^book_catalogue_memory_held_bytes\{consumer="list_snapshots"\} 0$/m);
    } finally {
      metrics.close();
    }
  });
});

describe('metrics: the store', () => {
  it('a compaction moves the compaction counter and its duration histogram', async () => {
    const o = await startObserved({ storeOptions: { compaction: { minBytes: 1, ratio: 0 } } });
    try {
      assert.equal((await o.app.request('POST', '/book', { body: { title: 'C', author: 'A', year: 1 } })).status, 201);
      assert.equal((await o.app.request('POST', '/book', { body: { title: 'D', author: 'A', year: 2 } })).status, 201);
      const text = await scrapeUntil(o, (t) => value(t, 'book_catalogue_compactions_total') >= 1);
      assert.ok(value(text, 'book_catalogue_compactions_total') >= 1);
      assert.ok(value(text, 'book_catalogue_compaction_duration_seconds_count') >= 1);
      assert.ok(value(text, 'book_catalogue_snapshot_bytes') > 0);
    } finally {
      await o.close();
    }
  });

  it('an injected write failure moves book_catalogue_write_failures_total', async () => {
    const rec = recordingFs();
    const o = await startObserved({ storeOptions: { fs: rec.fs } });
    try {
      rec.hooks.datasync = () => {
        throw ioError('EIO');
      };
      assert.equal((await o.app.request('POST', '/book', { body: { title: 'Lost', author: 'A', year: 1 } })).status, 500);
      const text = await o.scrape();
      assert.equal(value(text, 'book_catalogue_write_failures_total'), 1);
      assert.equal(value(text, 'book_catalogue_commits_total'), 0);
    } finally {
      await o.close();
    }
  });
});

describe('metrics: connections', () => {
  it('a connection refused by MAX_CONNECTIONS is counted and logged; open connections are a gauge, back to 0 once they close', async () => {
    const o = await startObserved({ limits: { maxConnections: 1 }, logLevel: 'warn' });
    try {
      // The server's own 'close' of the held connection: the gauge's listener, added first, has run by then.
      const closedOnServer = new Promise<void>((resolve) => o.app.server.once('connection', (socket: NetSocket) => socket.once('close', () => resolve())));
      const held = await openConnection(o.app.port);
      held.write('GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n');
      await held.response();
      const refused = await openConnection(o.app.port);
      await within('the server closing a connection over maxConnections', refused.closed);
      const text = await o.scrape();
      assert.equal(value(text, 'book_catalogue_connections_rejected_total{reason="max_connections"}'), 1);
      assert.equal(value(text, 'book_catalogue_connections_rejected_total{reason="per_address"}'), 0);
      assert.equal(value(text, 'book_catalogue_open_connections'), 1);
      const lines = o.app.logs.map((l) => JSON.parse(l) as { level: number; msg: string; refused?: number });
      assert.ok(lines.some((l) => l.level === 40 && l.msg === 'connections refused: MAX_CONNECTIONS are open' && l.refused === 1), o.app.logs.join('\n'));
      held.destroy();
      await within('the server seeing the held connection close', closedOnServer);
      assert.equal(value(await o.scrape(), 'book_catalogue_open_connections'), 0, 'the gauge after the only open connection closed');
    } finally {
      await o.close();
    }
  });

  it('a flood of refusals logs one line per interval, with how many were refused', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'warn', write: (line) => lines.push(line) });
    let now = 1_000_000;
    const server = new EventEmitter();
    watchConnections(server as NetServer, { logger, now: () => now, maxConnections: 5, events: undefined });
    for (let i = 0; i < 1000; i++) server.emit('drop');
    assert.equal(lines.length, 1);
    now += REFUSED_LOG_INTERVAL_MS - 1;
    server.emit('drop');
    assert.equal(lines.length, 1);
    now += 1;
    server.emit('drop');
    assert.equal(lines.length, 2, "999 held back, one more in the interval, and this one");
    assert.equal((JSON.parse(lines[1] as string) as { refused: number }).refused, 1001);
  });
});
