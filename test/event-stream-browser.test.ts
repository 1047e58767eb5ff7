import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type StartOptions, type TestApp } from './helpers/app.ts';
import { launchBrowser, type Browser, type Page } from './helpers/browser.ts';
import { fences } from './helpers/readme-blocks.ts';
import { findTool, needs } from './helpers/system-tools.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/*
 * GET /events from real browser clients (docs/contract.md, "Change feed", "Event tickets" and
 * "Cross-origin requests"), in Debian's chromium: a fetch-based client on another origin resumes
 * with Last-Event-ID; a browser's own EventSource opens the feed with a ticket, from another
 * origin, and survives a restart of the service behind a proxy that answers 502 while it is down;
 * so does the built-in page. One browser for the file.
 */

/**
 * The retry: sent in this file, shorter than the 15 s default to keep the test short, and longer
 * than the outage below: the property the default has against a real restart.
 */
const RETRY_MS = 8000;
/** Chromium's own reconnection time when no retry: came; the outage outlasts it. */
const CHROMIUM_DEFAULT_RETRY_MS = 3000;

const temp = tempDirs('event-stream-browser-');

const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'Browser Tests', year: 2024 });

interface Proxy {
  readonly url: string;
  /** Every request's `METHOD url`, in arrival order. */
  readonly seen: string[];
  /** The `METHOD url` of every request answered 502 (the service was down). */
  readonly badGateways: string[];
  /** Resolves once a 502 has answered a request whose URL starts with `prefix`. */
  badGateway(prefix: string): Promise<void>;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding'];

function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const kept = { ...headers };
  for (const name of HOP_BY_HOP) delete kept[name];
  return kept;
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A reverse proxy as nginx is one: it forwards to the service, streams answers, and answers 502 when it cannot connect. */
async function startProxy(upstreamPort: number): Promise<Proxy> {
  const seen: string[] = [];
  const badGateways: string[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    seen.push(line);
    const upstream = request({ host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: withoutHopByHop(req.headers), agent: false });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode as number, withoutHopByHop(answer.headers));
      res.flushHeaders();
      answer.pipe(res);
      answer.on('aborted', () => res.destroy());
    });
    upstream.on('error', () => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      badGateways.push(line);
      res.writeHead(502, { 'content-type': 'text/html', connection: 'close' });
      res.end('<html><body><h1>502 Bad Gateway</h1></body></html>\n');
      for (const check of [...waiters]) check();
    });
    req.pipe(upstream);
    res.on('close', () => upstream.destroy());
  });
  const url = await listening(server);
  return {
    url,
    seen,
    badGateways,
    badGateway: (prefix) =>
      new Promise((resolve) => {
        const check = (): void => {
          if (badGateways.some((l) => l.split(' ')[1]?.startsWith(prefix)) && waiters.delete(check)) resolve();
        };
        waiters.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Rejects with `what` unless `promise` settles within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The example of docs/contract.md, "Event tickets": the first js block of that section. */
async function documentedExample(): Promise<string> {
  const contract = await readFile(new URL('../docs/contract.md', import.meta.url), 'utf8');
  const section = contract.slice(contract.indexOf('\n## Event tickets\n'));
  const block = fences(section.slice(0, section.indexOf('\n## ', 1))).find((f) => f.lang === 'js');
  assert.ok(block, 'docs/contract.md, "Event tickets", shows a js example');
  return block.lines.join('\n');
}

describe('GET /events from browser clients, in Debian chromium', needs('chromium'), () => {
  let dataDir: string;
  let app: TestApp;
  let proxy: Proxy;
  let elsewhere: Server;
  let elsewhereUrl: string;
  let browser: Browser;
  /** A page on another origin, listed in CORS_ORIGINS, calling the service through the proxy. */
  let foreign: Page;
  let appOptions: StartOptions;

  before(async () => {
    dataDir = await temp.make();
    elsewhere = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Another origin</title><p>A page on another origin.</p>\n');
    });
    elsewhereUrl = await listening(elsewhere);
    appOptions = { dataDir, corsOrigins: [elsewhereUrl], ui: true, eventStreams: { retryMs: RETRY_MS }, logLevel: 'warn' };
    app = await startApp(appOptions);
    appOptions.port = app.port;
    proxy = await startProxy(app.port);
    browser = await launchBrowser(findTool('chromium') as string);
    foreign = await browser.newPage();
    await foreign.goto(`${elsewhereUrl}/`);
  });

  after(async () => {
    await browser?.close();
    await proxy?.close();
    elsewhere?.closeAllConnections();
    await new Promise((resolve) => elsewhere?.close(resolve));
    await app?.close();
    await temp.removeAll();
  });

  it('a fetch-based client on another listed origin resumes with Last-Event-ID (and Cache-Control), and reads WWW-Authenticate and Allow', async () => {
    for (const title of ['One', 'Two', 'Three']) assert.equal((await app.request('POST', '/book', { body: book(title) })).status, 201);
    const last = app.store.feed.seq;
    const resumed = await foreign.evaluate<{ status: number; ids: number[]; retry: string | undefined }>(`(async () => {
      const res = await fetch(${JSON.stringify(`${proxy.url}/events`)}, {
        headers: { authorization: ${JSON.stringify(app.token())}, 'last-event-id': '${last - 2}', 'cache-control': 'no-cache' },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const timeout = setTimeout(() => reader.cancel('no frame with id ${last} within 10 s'), 10000);
      let text = '';
      while (!/^id: ${last}$/m.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended before id ${last}: ' + JSON.stringify(text));
        text += value;
      }
      clearTimeout(timeout);
      await reader.cancel();
      return { status: res.status, ids: [...text.matchAll(/^id: (\\d+)$/gm)].map((m) => Number(m[1])), retry: /^retry: (\\d+)$/m.exec(text)?.[1] };
    })()`);
    assert.deepEqual(resumed, { status: 200, ids: [last - 1, last], retry: String(RETRY_MS) });
    assert.ok(proxy.seen.includes('OPTIONS /events'), 'the resume was preflighted');

    const readable = await foreign.evaluate<{ challenge: string | null; allow: string | null }>(`(async () => {
      const refused = await fetch(${JSON.stringify(`${proxy.url}/events`)});
      const wrongMethod = await fetch(${JSON.stringify(`${proxy.url}/events/ticket`)});
      return { challenge: refused.headers.get('www-authenticate'), allow: wrongMethod.headers.get('allow') };
    })()`);
    assert.deepEqual(readable, { challenge: 'Bearer realm="book-catalogue"', allow: 'OPTIONS, POST' });
  });

  it("a browser's EventSource on another origin opens the feed with a ticket (the documented example) and survives a restart behind a proxy that answers 502 meanwhile, with no gap; so does the built-in page", async () => {
    // The built-in page, served through the proxy too, signed in and following the feed.
    const builtIn = await browser.newPage();
    await builtIn.goto(`${proxy.url}/`);
    await builtIn.waitFor(`document.getElementById('signin-dialog').open`);
    await builtIn.fill('#username', TEST_USER);
    await builtIn.fill('#password', TEST_PASSWORD);
    await builtIn.press('Enter');
    await builtIn.waitFor(`/^Live:/.test(document.getElementById('feed-status').textContent)`);

    await foreign.evaluate(await documentedExample());
    const first = app.store.feed.seq + 1;
    await foreign.evaluate(`(async () => {
      window.feed = { seqs: [], resets: 0, expired: [], opens: 0, errors: [] };
      window.source = await followChanges(${JSON.stringify(proxy.url)}, ${JSON.stringify(app.token())}, undefined, {
        change: (c) => feed.seqs.push(c.seq),
        reset: () => feed.resets++,
        expired: (seq) => feed.expired.push(seq),
      });
      source.addEventListener('open', () => feed.opens++);
      source.addEventListener('error', () => feed.errors.push({ at: performance.now(), state: source.readyState }));
    })()`);
    await foreign.waitFor('feed.opens === 1 || source.readyState === 2');
    assert.equal(await foreign.evaluate('source.readyState'), 1, 'the EventSource opened the feed with its ticket');
    assert.equal((await app.request('POST', '/book', { body: book('Before the restart') })).status, 201);
    await foreign.waitFor(`feed.seqs.includes(${first})`);

    // The restart: the streams end as the drain starts; the proxy answers 502 until the service is back.
    await app.close({ keepData: true });
    await foreign.waitFor('feed.errors.length === 1', { timeoutMs: 5000 });
    assert.equal(await foreign.evaluate('source.readyState'), 0, 'CONNECTING: the EventSource will reconnect by itself');
    await within(proxy.badGateway('/events'), 10_000, 'the built-in page tried to reconnect while the service was down, and got a 502');
    // Longer down than Chromium's own reconnection time: without retry: the EventSource's
    // reconnect would meet a 502 now and close for good.
    await foreign.waitFor(`performance.now() - feed.errors[0].at > ${CHROMIUM_DEFAULT_RETRY_MS + 500}`, { timeoutMs: 10_000 });
    app = await startApp(appOptions);

    // A change made before the EventSource is back comes from the resume; the next one live.
    assert.equal((await app.request('POST', '/book', { body: book('Made while it waited') })).status, 201);
    const missed = app.store.feed.seq;
    await foreign.waitFor(`feed.seqs.includes(${missed}) || source.readyState === 2`, { timeoutMs: RETRY_MS + 10_000 });
    assert.notEqual(await foreign.evaluate('source.readyState'), 2, `the EventSource closed for good; the proxy answered 502 to: ${proxy.badGateways.join(', ')}`);
    assert.equal((await app.request('POST', '/book', { body: book('After the restart') })).status, 201);
    const live = app.store.feed.seq;
    await foreign.waitFor(`feed.seqs.includes(${live})`);
    const feed = await foreign.evaluate<{ seqs: number[]; resets: number; errors: { state: number }[] }>('feed');
    assert.deepEqual(feed.seqs, [first, missed, live], 'every change once, in order, none missed at the restart');
    assert.equal(feed.resets, 0);
    assert.deepEqual(feed.errors.map((e) => e.state), [0], 'one drop, reconnected by itself');
    assert.deepEqual(proxy.badGateways.filter((l) => l.includes('ticket=')), [], 'no EventSource request met a 502');
    assert.ok(missed === first + 1 && live === missed + 1);

    // The built-in page resumed by itself, past its 502s, and shows the change made after the restart.
    await builtIn.waitFor(`[...document.querySelectorAll('#rows td')].some((td) => td.textContent === 'After the restart')`, { timeoutMs: 30_000 });
    await builtIn.waitFor(`/^Live:/.test(document.getElementById('feed-status').textContent)`);
    await foreign.evaluate('source.close()');
  });

  it('the documented example closes its EventSource at event: expired and hands on the last seq', async () => {
    // Signed 896 s ago: it expires 4 to 5 s from now, in the time it takes to see one live change.
    const token = signToken(TEST_USER, Buffer.from(TEST_SECRET), Math.floor(Date.now() / 1000) - 896);
    const seq = app.store.feed.seq;
    await foreign.evaluate(`(async () => {
      window.ending = { seqs: [], expired: [] };
      window.ends = await followChanges(${JSON.stringify(proxy.url)}, ${JSON.stringify(token)}, ${seq}, {
        change: (c) => ending.seqs.push(c.seq),
        reset: () => {},
        expired: (seq) => ending.expired.push(seq),
      });
    })()`);
    assert.equal((await app.request('POST', '/book', { body: book('Just before expiry') })).status, 201);
    await foreign.waitFor(`ending.expired.length === 1`, { timeoutMs: 10_000 });
    assert.deepEqual(await foreign.evaluate('[ending.seqs, ending.expired, ends.readyState]'), [[seq + 1], [seq + 1], 2]);
  });
});
