import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_PASSWORD, TEST_USER, type Envelope, type TestApp } from './helpers/app.ts';
import { runMain, startMain } from './helpers/process.ts';
import { requestText, sendThenHalfClose, statusesIn } from './helpers/raw.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { within } from './helpers/wait.ts';

/* A self-signed certificate for localhost and 127.0.0.1, valid for a century (test/fixtures/tls). */
const FIXTURES = new URL('./fixtures/tls/', import.meta.url);
const CERT_FILE = new URL('cert.pem', FIXTURES).pathname;
const KEY_FILE = new URL('key.pem', FIXTURES).pathname;
const CERT = readFileSync(CERT_FILE);
const KEY = readFileSync(KEY_FILE);
/** A raw client's TLS settings: it trusts only the fixture certificate. */
const CLIENT_TLS = { ca: CERT, servername: 'localhost' };

interface HttpsResult {
  status: number;
  json: Envelope;
}

/** One HTTPS request that trusts only the fixture certificate (no rejectUnauthorized shortcut). */
function httpsRequest(port: number, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<HttpsResult> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers, ...CLIENT_TLS, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) as Envelope }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('TLS: the same service over node:https', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', tls: { cert: CERT, key: KEY } });
  });
  after(() => app.close());

  it('serves GET /healthz over HTTPS with the self-signed fixture certificate', async () => {
    assert.deepEqual(await httpsRequest(app.port, 'GET', '/healthz'), { status: 200, json: { status: 200, message: 'OK', data: { status: 'ok' } } });
  });

  it('logs in and creates a book over HTTPS', async () => {
    const login = await httpsRequest(app.port, 'POST', '/token', { 'content-type': 'application/json' }, JSON.stringify({ username: TEST_USER, password: TEST_PASSWORD }));
    const { token } = login.json.data as { token: string };
    const created = await httpsRequest(app.port, 'POST', '/book', { authorization: `Bearer ${token}` }, JSON.stringify({ title: 'T', author: 'A', year: 1 }));
    assert.deepEqual(created.json, { status: 201, message: 'Book created successfully', data: { id: 1, title: 'T', author: 'A', year: 1 } });
  });

  it('answers 401 Authorization token required over HTTPS like over HTTP', async () => {
    assert.deepEqual((await httpsRequest(app.port, 'GET', '/books')).json, { status: 401, message: 'Authorization token required', data: null });
  });

  it('a malformed request over TLS gets the 400 envelope from the same clientError handler', async () => {
    const socket = connect({ host: '127.0.0.1', port: app.port, ...CLIENT_TLS });
    await within('the TLS handshake', once(socket, 'secureConnect'));
    socket.end('NOT HTTP AT ALL\r\n\r\n');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    await within('the server closing the connection after its 400', once(socket, 'close'));
    const text = Buffer.concat(chunks).toString();
    assert.match(text, /^HTTP\/1\.1 400 /);
    assert.ok(text.endsWith('{"status":400,"message":"Bad request","data":null}'), text);
  });

  it('a client that half-closes (close_notify, FIN) after a write still gets its answer, then the connection closes; the write is made once', async () => {
    const body = JSON.stringify({ title: 'Half-closed over TLS', author: 'A client', year: 2001 });
    const received = await within('the server closed the half-closed TLS connection', sendThenHalfClose(app.port, requestText('POST', '/book', { authorization: app.token(), body }), { tls: CLIENT_TLS }));
    assert.deepEqual(statusesIn(received), [201]);
    const books = (await httpsRequest(app.port, 'GET', '/books', { authorization: app.token() })).json.data as { title: string }[];
    assert.equal(books.filter((b) => b.title === 'Half-closed over TLS').length, 1);
  });

  it('a request answered before its body (401) gets that answer only when the client half-closes in the body', async () => {
    const unfinished = 'POST /book HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer not-a-token\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":';
    const received = await within('the server closed the connection', sendThenHalfClose(app.port, unfinished, { tls: CLIENT_TLS }));
    assert.deepEqual(statusesIn(received), [401], received);
  });

  it('a connection that ends before its TLS handshake is closed at once, not at the handshake timeout', async () => {
    const socket = netConnect(app.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.end();
    await within('the server closed the connection well before the 10 s handshake timeout', once(socket, 'close'), 5_000);
  });

  it('the HTTPS server carries the same timeouts and connection cap', () => {
    const { server } = app;
    assert.deepEqual(
      [server.headersTimeout, server.requestTimeout, server.keepAliveTimeout, server.maxConnections],
      [10_000, 30_000, 5_000, 1024],
    );
  });
});

describe('TLS handshake limit', () => {
  let app: TestApp;
  let socket: Socket | undefined;
  before(async () => {
    app = await startApp({ logLevel: 'silent', tls: { cert: CERT, key: KEY }, limits: { headersTimeoutMs: 300, requestTimeoutMs: 600, connectionsCheckingIntervalMs: 50 } });
  });
  after(async () => {
    socket?.destroy();
    await app.close();
  });

  it('a client that connects and never starts the TLS handshake is cut off after headersTimeout', { timeout: 5_000 }, async () => {
    socket = netConnect(app.port, '127.0.0.1');
    socket.on('error', () => {});
    await once(socket, 'close');
  });
});

describe('TLS from the command line', () => {
  const temp = tempDirs('book-catalogue-tls-');
  let dataDir: string;
  before(async () => {
    dataDir = await temp.make();
  });
  after(() => temp.removeAll());

  const env = { AUTH_PASSWORD: TEST_PASSWORD, SECRET_TOKEN: 'cli-tls-secret-that-is-32-bytes-long!!' };

  it('--tls-cert and --tls-key serve HTTPS and the startup line says https://', { timeout: 15_000 }, async () => {
    const args = ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--tls-cert', CERT_FILE, '--tls-key', KEY_FILE];
    const main = await startMain({ args, env, cwd: dataDir });
    try {
      assert.match(main.startup.msg, /^listening on https:\/\/127\.0\.0\.1:\d+/);
      assert.equal((await httpsRequest(main.port, 'GET', '/healthz')).status, 200);
    } finally {
      assert.equal((await main.stop()).code, 0);
    }
  });

  for (const [name, args, envExtra, code, pattern] of [
    ['an unreadable key file stops startup with one line naming it', ['--tls-cert', CERT_FILE, '--tls-key', '/nonexistent/key.pem'], {}, 1, /^book-catalogue: cannot read TLS key \/nonexistent\/key\.pem: .*\n$/],
    ['a key file that holds no usable key stops startup with one line naming it', ['--tls-cert', CERT_FILE, '--tls-key', CERT_FILE], {}, 1, new RegExp(`^book-catalogue: TLS key ${CERT_FILE} is not a PEM private key.*\n$`)],
    ['a certificate file that holds no certificate stops startup with one line naming it', ['--tls-cert', KEY_FILE, '--tls-key', KEY_FILE], {}, 1, new RegExp(`^book-catalogue: TLS certificate ${KEY_FILE} is not a PEM certificate.*\n$`)],
    ['a certificate without a key is a configuration error', [], { TLS_CERT_FILE: CERT_FILE }, 2, /^book-catalogue: TLS needs both a certificate and a key.*\n$/],
  ] as const) {
    it(name, { timeout: 15_000 }, async () => {
      // An unusable listening address: should TLS be skipped by mistake, listening fails and the
      // process still exits (with another message) instead of serving forever.
      const result = await runMain({ args: ['--port', '0', '--host', '256.0.0.1', '--data-dir', dataDir, ...args], env: { ...env, ...envExtra }, cwd: dataDir });
      assert.equal(result.code, code);
      assert.match(result.stderr, pattern);
    });
  }
});
