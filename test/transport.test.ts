import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TRANSPORT_LIMITS } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { connectionCount, openConnection, rawRequestThenClose, requestText, sendThenHalfClose, statusesIn, type RawConnection } from './helpers/raw.ts';
import { until, within } from './helpers/wait.ts';

/*
 * Slow-client attacks over raw sockets. The timeouts are injected (seconds instead of tens of
 * seconds) so the file stays quick; the server code path is the same as with TRANSPORT_LIMITS.
 * They still leave an ordinary client time to send its head on a loaded machine: with 400 ms, the
 * clients served beside a slow one were themselves cut off with 408 when the test process waited
 * that long for a turn.
 */
const SHORT = {
  headersTimeoutMs: 2_000,
  requestTimeoutMs: 3_000,
  keepAliveTimeoutMs: 100,
  connectionsCheckingIntervalMs: 25,
} as const;

const envelope408 = { status: 408, message: 'Request timeout', data: null };

/** `localAddress`: the loopback address the client connects from (every 127.x.y.z is loopback on Linux). */
function openIdle(port: number, localAddress = '127.0.0.1'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      resolve(socket);
    });
  });
}

async function healthy(app: TestApp): Promise<void> {
  const res = await app.request('GET', '/healthz', { auth: false });
  assert.deepEqual(res.json, { status: 200, message: 'OK', data: { status: 'ok' } });
}

describe('transport limits: slow and idle clients cannot hold the server', { concurrency: true }, () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', limits: SHORT });
  });
  after(() => app.close());

  it('a client sending its headers one byte per tick is cut off with 408 before they are complete, while other clients are served', { timeout: 10_000 }, async () => {
    const conn = await openConnection(app.port);
    const request = `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'s'.repeat(40)}\r\n\r\n`;
    // One byte per tenth of the header limit: the whole head would need several limits' worth.
    const tick = SHORT.headersTimeoutMs / 10;
    let sent = 0;
    let closed = false;
    void conn.closed.then(() => (closed = true));
    const trickle = setInterval(() => {
      if (!closed && sent < request.length) conn.write(request[sent++] as string);
    }, tick);
    try {
      const served: Promise<void>[] = [];
      while (!closed) {
        served.push(healthy(app));
        await Promise.race([conn.closed, new Promise((r) => setTimeout(r, tick))]);
      }
      await Promise.all(served);
      assert.ok(served.length >= 3, `other clients were served meanwhile (${served.length})`);
      assert.ok(sent < request.length, `cut off after ${sent} of ${request.length} bytes`);
      assert.deepEqual((await conn.response()).json, envelope408);
    } finally {
      clearInterval(trickle);
      conn.destroy();
    }
  });

  it('a body that stops half-way is cut off with 408 and the server keeps serving', { timeout: 10_000 }, async () => {
    const conn = await openConnection(app.port);
    const body = JSON.stringify({ title: 'Half', author: 'Way', year: 2000 });
    conn.write(
      `POST /book HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${app.token()}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body.slice(0, body.length / 2)}`,
    );
    await conn.closed;
    assert.deepEqual((await conn.response()).json, envelope408);
    await healthy(app);
    assert.deepEqual((await app.request('GET', '/books')).json.data, [], 'the half-sent book was not stored');
  });

  it('a chunked body that stops half-way is cut off', { timeout: 10_000 }, async () => {
    const conn = await openConnection(app.port);
    conn.write(
      `POST /book HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${app.token()}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"tit\r\n`,
    );
    await conn.closed;
    await healthy(app);
  });

  it('a connection that never sends a byte is closed after headersTimeout', { timeout: 10_000 }, async () => {
    const conns = await Promise.all(Array.from({ length: 20 }, () => openConnection(app.port)));
    await Promise.all(conns.map((c) => c.closed));
    await healthy(app);
  });

  // Node 20 keeps the socket about one second past keepAliveTimeout so clients close first.
  // The bound sits below Node's default keepAliveTimeout (5 s): it fails if the limit is not applied.
  it('an idle keep-alive connection is closed after keepAliveTimeout', { timeout: 4_000 }, async () => {
    const conn = await openConnection(app.port);
    conn.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    const res = await conn.response();
    assert.equal(res.status, 200);
    assert.notEqual(res.headers.connection, 'close');
    await conn.closed;
  });

  it('431 Request header fields too large for headers over 16 KiB, then the connection closes', async () => {
    const res = await rawRequestThenClose(app.port, `GET /books HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`);
    assert.deepEqual(res.json, { status: 431, message: 'Request header fields too large', data: null });
  });
});

describe('connection cap', () => {
  // From ten addresses, 50 each: one address may hold only MAX_CONNECTIONS_PER_ADDRESS (64) connections.
  it('500 idle connections do not stop a new client (default limits)', { timeout: 20_000 }, async () => {
    const app = await startApp({ logLevel: 'silent' });
    const idle: Socket[] = [];
    try {
      for (let i = 0; i < 500; i += 50) idle.push(...(await Promise.all(Array.from({ length: 50 }, () => openIdle(app.port, `127.0.0.${10 + i / 50}`)))));
      await healthy(app);
      assert.ok((await connectionCount(app.server)) >= 500);
      assert.equal(idle.filter((s) => s.destroyed).length, 0, 'the idle connections are still open');
    } finally {
      for (const socket of idle) socket.destroy();
      await app.close();
    }
  });

  it('connections over maxConnections are closed on arrival; the open ones are still served', { timeout: 30_000 }, async () => {
    const app = await startApp({ logLevel: 'silent', limits: { maxConnections: 3 } });
    const held: RawConnection[] = [];
    try {
      for (let i = 0; i < 3; i++) held.push(await openConnection(app.port));
      const refused = await openConnection(app.port);
      held.push(refused);
      refused.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await assert.rejects(refused.response(), /closed before a complete response/);
      held.pop();
      const first = held[0] as RawConnection;
      first.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      assert.equal((await first.response()).status, 200);
      (held.pop() as RawConnection).destroy();
      await until('the server seeing the closed connection go', async () => (await connectionCount(app.server)) < 3);
      await healthy(app);
    } finally {
      for (const conn of held) conn.destroy();
      await app.close();
    }
  });

  it('a failed accept (what Node emits on the listening server, as for EMFILE past libuv\'s reserve descriptor) is logged, and the server goes on serving', async () => {
    const app = await startApp({ logLevel: 'warn' });
    try {
      const failure = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' });
      app.server.emit('error', failure);
      await healthy(app);
      const lines = app.logs.map((l) => JSON.parse(l) as { level: number; msg: string });
      assert.ok(lines.some((l) => l.level === 40 && l.msg === 'accepting a connection failed; still listening'), app.logs.join('\n'));
    } finally {
      await app.close();
    }
  });
});

describe('the limits are set explicitly', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent' });
  });
  after(() => app.close());

  it('the server carries the documented timeouts and cap', () => {
    const { server } = app;
    assert.deepEqual(
      {
        headersTimeout: server.headersTimeout,
        requestTimeout: server.requestTimeout,
        keepAliveTimeout: server.keepAliveTimeout,
        maxConnections: server.maxConnections,
      },
      { headersTimeout: 10_000, requestTimeout: 30_000, keepAliveTimeout: 5_000, maxConnections: 1024 },
    );
    assert.deepEqual(TRANSPORT_LIMITS, {
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      connectionsCheckingIntervalMs: 1_000,
      maxHeaderBytes: 16 * 1024,
      maxConnections: 1024,
      sendTimeoutMs: 30_000,
      maxPipelinedRequests: 16,
      maxPipelinedWithoutToken: 1,
      maxConnectionsPerAddress: 64,
      maxInFlightPerAddress: 256,
      minStreamBytesPerSecond: 64 * 1024,
    });
  });

  // keepAliveTimeout is a per-socket timer; the two request timeouts rely on the periodic check.
  it('the checking interval is short enough to enforce headersTimeout and requestTimeout', () => {
    assert.ok(TRANSPORT_LIMITS.connectionsCheckingIntervalMs * 5 <= TRANSPORT_LIMITS.headersTimeoutMs);
  });
});

describe('requests Node would answer outside the envelope (found by the fuzzer)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent' });
  });
  after(() => app.close());

  it('400 Bad request for an HTTP/1.1 request without Host (RFC 9112 §3.2), then the connection closes', async () => {
    const res = await rawRequestThenClose(app.port, 'GET /healthz HTTP/1.1\r\n\r\n');
    assert.deepEqual(res.json, { status: 400, message: 'Bad request', data: null });
  });

  it('an HTTP/1.0 request without Host is served', async () => {
    const res = await rawRequestThenClose(app.port, 'GET /healthz HTTP/1.0\r\n\r\n');
    assert.deepEqual(res.json, { status: 200, message: 'OK', data: { status: 'ok' } });
  });

  it('an Expect other than 100-continue is ignored and the request served (RFC 9110 §10.1.1)', async () => {
    const conn = await openConnection(app.port);
    try {
      conn.write('GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: nonsense\r\n\r\n');
      assert.deepEqual((await conn.response()).json, { status: 200, message: 'OK', data: { status: 'ok' } });
    } finally {
      conn.destroy();
    }
  });

  it('405 Method not allowed with Allow for CONNECT to a known path, then the connection closes', async () => {
    const res = await rawRequestThenClose(app.port, 'CONNECT /book/1 HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.deepEqual(res.json, { status: 405, message: 'Method not allowed', data: null });
    assert.equal(res.headers.allow, 'DELETE, GET, HEAD, PUT');
  });

  it('404 Not found for CONNECT in authority form', async () => {
    const res = await rawRequestThenClose(app.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.deepEqual(res.json, { status: 404, message: 'Not found', data: null });
  });

  it('a CONNECT pipelined behind another request is answered after it; behind an answer that closes the connection, or a reset, it is not run; the process goes on', async () => {
    const logged = await startApp({ logLevel: 'info' });
    try {
      const connect = 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n';
      const behind = await openConnection(logged.port);
      behind.write(requestText('GET', '/healthz') + connect);
      assert.deepEqual([(await behind.response()).status, (await behind.response()).status], [200, 404]);
      await within('the connection closed', behind.closed);
      const afterClose = await openConnection(logged.port);
      afterClose.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n${connect}`);
      assert.equal((await afterClose.response()).status, 400);
      await within('the connection closed', afterClose.closed);
      await assert.rejects(afterClose.response(), /closed before a complete response/, 'no answer to the CONNECT');
      // Behind a request the guard resets the connection for (pipelined without a token).
      const reset = await openConnection(logged.port);
      reset.write(requestText('GET', '/healthz').repeat(2) + connect);
      await within('the connection reset', reset.closed);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal((await logged.request('GET', '/healthz')).status, 200);
      const connects = logged.logs.filter((l) => (JSON.parse(l) as { method?: string }).method === 'CONNECT');
      assert.equal(connects.length, 1, connects.join('\n'));
    } finally {
      await logged.close();
    }
  });

  it('a request asking for Upgrade is answered with Connection: close, then a malformed request cannot hang on that connection', { timeout: 10_000 }, async () => {
    const body = '{"title":"Up","author":"Grade","year":2000}';
    const conn = await openConnection(app.port);
    conn.write(`POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${app.token()}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    const res = await conn.response();
    assert.equal(res.status, 201);
    assert.equal(res.headers.connection, 'close');
    conn.write('DELETE  HTTP/1.1\r\nHost: x\r\n\r\n');
    await conn.closed;
  });
});

describe('the end of a connection: a client that half-closes after its request, requests pipelined after an answer that closes it (RFC 9112 §9.6)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent' });
  });
  after(() => app.close());

  /** A create of a book titled `title`, as its bytes go out. */
  const post = (title: string): string => requestText('POST', '/book', { authorization: app.token(), body: JSON.stringify({ title, author: 'A client', year: 2001 }) });

  it('a client that half-closes still gets the answer to a write and to the request pipelined before it, then the connection closes; the write is made once', async () => {
    const received = await sendThenHalfClose(app.port, requestText('GET', '/healthz') + post('Half-closed'));
    assert.deepEqual(statusesIn(received), [200, 201]);
    const books = (await app.request('GET', '/books')).json.data as { title: string }[];
    assert.equal(books.filter((b) => b.title === 'Half-closed').length, 1);
  });

  it('a request answered before its body (401) gets that answer only when the client half-closes in the body, at once or after the answer came, or when the body never ends', async () => {
    const unfinished = 'POST /book HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":';
    for (const ready of [async () => {}, () => new Promise<void>((resolve) => setTimeout(resolve, 200))]) {
      const received = await within('the server closed the connection', sendThenHalfClose(app.port, unfinished, { ready }));
      assert.deepEqual(statusesIn(received), [401], received);
    }
    // Nor when the body never ends: the request timeout closes the connection without a 408.
    const timed = await startApp({ logLevel: 'silent', limits: { headersTimeoutMs: 300, requestTimeoutMs: 300, connectionsCheckingIntervalMs: 50 } });
    try {
      const received = await within('the server closed the connection', sendThenHalfClose(timed.port, unfinished, { ready: () => new Promise(() => {}) }));
      assert.deepEqual(statusesIn(received), [401], received);
    } finally {
      await timed.close();
    }
  });

  it('requests pipelined after an answer that closes the connection are not run: behind a refusal that closes (also once it is sent), or behind a request that asked to close', async () => {
    const cases = [
      ['GET /healthz HTTP/1.1\r\nHost: localhost\r\nHost: other\r\n\r\n', '400', 'Behind a 400'],
      ['GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', '200', 'Behind a close'],
    ] as const;
    for (const [first, status, title] of cases) {
      const conn = await openConnection(app.port);
      conn.write(first + post(title));
      assert.equal((await conn.response()).status, Number(status));
      await within('the connection closed', conn.closed);
    }
    // Behind a 413 for a declared body over the limit, sent whole: the 413 is done and the socket
    // ending by the time the next request is parsed.
    const big = 'x'.repeat(90_000);
    for (let i = 0; i < 5; i++) {
      const conn = await openConnection(app.port);
      conn.write(requestText('POST', '/book', { authorization: app.token(), body: big }) + post(`Behind a 413, ${i}`));
      assert.equal((await conn.response()).status, 413);
      await within('the connection closed', conn.closed);
    }
    const books = (await app.request('GET', '/books')).json.data as { title: string }[];
    assert.deepEqual(books.filter((b) => b.title.startsWith('Behind')), []);
  });
});
