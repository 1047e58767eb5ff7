import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { listen, serveApp, type ServedApp } from '../src/transport/http-server.ts';
import { SHUTDOWN_GRACE_MS } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { connectionCount } from './helpers/raw.ts';
import { killAll, startMain, type RunningService } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { until, within } from './helpers/wait.ts';

const temp = tempDirs('book-catalogue-takeover-');
after(() => temp.removeAll());

/*
 * Sockets the HTTP layer hands over or gives up on: CONNECT (Node passes the socket to a
 * 'connect' listener and takes its own error listener and timeouts off), requests Node's parser
 * refuses ('clientError'), and Upgrade requests (served, then closed). A client can drop each of
 * these at any moment; an error on a socket without a listener would end the process.
 */
const KINDS = {
  'CONNECT to a path': 'CONNECT /book/1 HTTP/1.1\r\nHost: localhost\r\n\r\n',
  'CONNECT in authority form': 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n',
  'CONNECT with bytes after it': 'CONNECT / HTTP/1.1\r\nHost: localhost\r\n\r\nGET / HTTP/1.1\r\n\r\n',
  Upgrade: 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
  'a malformed request line (400)': 'DELETE  HTTP/1.1\r\nHost: x\r\n\r\n',
  'conflicting Content-Length (400)': 'POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
  'headers too large (431)': `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`,
} as const;

/** How a client goes away: each leaves the server writing or reading into a dead connection. */
const DROPS = {
  'reset at once': (socket: Socket) => socket.resetAndDestroy(),
  'reset once the answer is on its way, unread': (socket: Socket) => setTimeout(() => socket.resetAndDestroy(), 20),
  'half-close and never read': (socket: Socket) => socket.end(),
  'close with the answer unread': (socket: Socket) => setTimeout(() => socket.destroy(), 20),
} as const;

/** Connects, sends `request`, never reads, then drops the connection the given way. */
function sendAndDrop(port: number, request: string, drop: (socket: Socket) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.on('error', () => {});
    socket.once('connect', () => {
      socket.write(request, () => {
        drop(socket);
        resolve();
      });
    });
    socket.once('error', reject);
  });
}

/** Connects, sends `request` and then neither reads nor closes. */
function sendAndHold(port: number, request: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.pause();
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      socket.write(request, () => resolve(socket));
    });
  });
}

async function healthy(port: number): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  assert.deepEqual(await res.json(), { status: 200, message: 'OK', data: { status: 'ok' } });
}

/** The released build in a child process, so a crash is an exit the tests can see. */
async function startService(): Promise<RunningService> {
  const dataDir = await temp.make();
  return startMain({
    args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    env: { SECRET_TOKEN: 'takeover-test-secret-that-is-32-bytes-or-more', AUTH_PASSWORD: 'pw', LOG_LEVEL: 'info' },
    cwd: dataDir,
  });
}

describe('a client that drops a CONNECT, Upgrade or refused request at any moment cannot stop the service', () => {
  let service: RunningService;
  before(async () => {
    service = await startService();
  });
  after(killAll);

  for (const [kind, request] of Object.entries(KINDS)) {
    for (const [how, drop] of Object.entries(DROPS)) {
      it(`${kind}, then ${how}: the process lives and keeps serving`, async () => {
        await Promise.all(Array.from({ length: 5 }, () => sendAndDrop(service.port, request, drop)));
        // An error on a socket without a listener ends the process a few turns after the drop.
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.equal(service.child.exitCode, null, service.output().stderr);
        await healthy(service.port);
      });
    }
  }
});

describe('a client that holds a CONNECT, Upgrade or refused request without reading', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', limits: { keepAliveTimeoutMs: 200, connectionsCheckingIntervalMs: 25 } });
  });
  after(() => app.close());

  for (const [kind, request] of Object.entries(KINDS)) {
    it(`${kind}: the server closes the connection`, { timeout: 30_000 }, async () => {
      const held = await Promise.all(Array.from({ length: 5 }, () => sendAndHold(app.port, request)));
      try {
        await until(`the server closing the held ${kind} connections`, async () => (await connectionCount(app.server)) === 0);
        await healthy(app.port);
      } finally {
        for (const socket of held) socket.destroy();
      }
    });
  }
});

describe('the drain closes taken-over sockets', () => {
  it('a CONNECT its app has not answered yet is closed as the drain starts, not at its deadline', async () => {
    // An app that holds a CONNECT unanswered: the real one answers at once and closes the socket
    // itself, so only a held one shows whether the drain closes it.
    let reached: (socket: Socket) => void = () => {};
    const held = new Promise<Socket>((resolve) => (reached = resolve));
    const app: ServedApp = Object.assign((req: IncomingMessage) => reached(req.socket), { draining: false, close: async () => {} });
    const server = serveApp(app);
    const { port } = await listen(server, 0, '127.0.0.1');
    const client = await sendAndHold(port, KINDS['CONNECT to a path']);
    try {
      const socket = await within('the CONNECT reaching the app', held);
      assert.equal(socket.destroyed, false, 'open while the app holds it');
      // The drain closes taken-over sockets before its first wait; the grace would end at 60 s.
      const drained = server.shutdown(60_000);
      assert.equal(socket.destroyed, true, 'the taken-over socket is still open once the drain has started');
      await within('the drain finishing', drained);
    } finally {
      client.destroy();
      await server.shutdown(0);
    }
  });

  it('shutdown finishes at once with CONNECT and refused-request sockets held open', { timeout: 30_000 }, async () => {
    const app = await startApp({ logLevel: 'silent' });
    const held = await Promise.all(Object.values(KINDS).map((request) => sendAndHold(app.port, request)));
    try {
      // A grace far longer than the wait: only closing these sockets ends it in time.
      await within('shutdown with CONNECT and refused-request sockets held (a 60 s grace)', app.server.shutdown(60_000));
    } finally {
      for (const socket of held) socket.destroy();
      await app.close();
    }
  });
});

describe('the released build', () => {
  after(killAll);

  it('exits 0 within the drain limit on SIGTERM with such connections held open', { timeout: 30_000 }, async () => {
    const service = await startService();
    const held = await Promise.all(Object.values(KINDS).map((request) => sendAndHold(service.port, request)));
    const started = performance.now();
    const exit = await service.stop('SIGTERM');
    const took = performance.now() - started;
    for (const socket of held) socket.destroy();
    assert.equal(exit.code, 0, exit.stdout + exit.stderr);
    assert.ok(took < SHUTDOWN_GRACE_MS, `exited after ${Math.round(took)} ms`);
  });
});
