import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { createMetrics, TRANSPORT_LIMITS, type Book, type CatalogueMetrics } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { connectionCount, openConnection, openPaused, type RawConnection } from './helpers/raw.ts';
import { until, within } from './helpers/wait.ts';

/*
 * Per-address limits (SECURITY.md, "Limits"): what one client address can make the service hold.
 * On Linux every 127.x.y.z is loopback, so a client binding 127.0.0.2 is another address.
 */

const OTHER_ADDRESS = '127.0.0.2';

function sample(metrics: CatalogueMetrics, series: string): number {
  const line = metrics.registry.expose().split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const REFUSED_PER_ADDRESS = 'book_catalogue_connections_rejected_total{reason="per_address"}';
const HEALTHZ = 'GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n';

function withToken(app: TestApp, path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${app.token()}\r\n\r\n`;
}

async function healthzFrom(app: TestApp, localAddress: string): Promise<number> {
  const conn = await openConnection(app.port, localAddress);
  try {
    conn.write(HEALTHZ);
    return (await conn.response()).status;
  } finally {
    conn.destroy();
  }
}

/** Books of 6 KB each: 3,000 make GET /books (18 MB) outlast loopback's socket buffers, so a client that stops reading holds its answer. */
function books(count: number): Book[] {
  return Array.from({ length: count }, (_, i) => ({ id: i + 1, title: '€'.repeat(1000), author: '€'.repeat(1000), year: 2000 }));
}

describe('no token: many connections from one address, each pipelining requests for the OpenAPI document and never reading', () => {
  it('the connections past MAX_CONNECTIONS_PER_ADDRESS are closed on arrival and counted; those admitted are closed for pipelining; another address is answered meanwhile', { timeout: 60_000 }, async () => {
    const metrics = createMetrics();
    const app = await startApp({ logLevel: 'warn', metrics });
    const attackers: Socket[] = [];
    const clients = 100;
    const cap = TRANSPORT_LIMITS.maxConnectionsPerAddress;
    try {
      for (let i = 0; i < clients; i += 25) attackers.push(...(await Promise.all(Array.from({ length: 25 }, () => openPaused(app.port)))));
      await until(`${clients - cap} of ${clients} connections from one address refused (${REFUSED_PER_ADDRESS})`, () => sample(metrics, REFUSED_PER_ADDRESS) === clients - cap);
      await until('the first MAX_CONNECTIONS_PER_ADDRESS open, the others closed', async () => (await connectionCount(app.server)) === cap);
      const flood = 'GET /openapi.json HTTP/1.1\r\nHost: localhost\r\n\r\n'.repeat(TRANSPORT_LIMITS.maxPipelinedRequests);
      for (const socket of attackers) if (!socket.destroyed) socket.write(flood);
      assert.equal(await within(`GET /healthz from ${OTHER_ADDRESS} while the flood is served`, healthzFrom(app, OTHER_ADDRESS)), 200);
      await until('every admitted connection closed for pipelining without a token', async () => (await connectionCount(app.server)) === 0);
      const lines = app.logs.map((l) => JSON.parse(l) as { msg: string; refused?: number; limit?: number; address?: string });
      assert.ok(
        lines.some((l) => l.msg === 'connections refused: MAX_CONNECTIONS_PER_ADDRESS are open from their address' && l.limit === cap && l.address === '127.0.0.1'),
        app.logs.join('\n'),
      );
      assert.ok(lines.some((l) => l.msg === 'connections closed: a request without a valid token was pipelined'), app.logs.join('\n'));
    } finally {
      for (const socket of attackers) socket.destroy();
      await app.close();
      metrics.close();
    }
  });
});

/** Sends `requests` on a new connection, waits for the server to close it, and counts the complete answers it sent. */
async function answeredBeforeClose(app: TestApp, requests: string): Promise<number> {
  const conn = await openConnection(app.port);
  try {
    conn.write(requests);
    await within('the connection closed by the server', conn.closed);
    let answered = 0;
    for (;;) {
      try {
        await conn.response();
        answered++;
      } catch {
        return answered;
      }
    }
  } finally {
    conn.destroy();
  }
}

describe('a request without a valid token may not be pipelined', () => {
  it('two pipelined requests without a token: the connection is reset, the second never answered', async () => {
    const app = await startApp({ logLevel: 'silent' });
    try {
      assert.ok((await answeredBeforeClose(app, HEALTHZ.repeat(2))) < 2);
    } finally {
      await app.close();
    }
  });

  it('a token that does not verify counts as none; with a valid token both are answered', async () => {
    const app = await startApp({ logLevel: 'silent' });
    const valid = await openConnection(app.port);
    try {
      const [head, payload] = app.token().split('.') as [string, string];
      const forged = `GET /healthz HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${head}.${payload}.AAAA\r\n\r\n`;
      assert.ok((await answeredBeforeClose(app, forged.repeat(2))) < 2);
      valid.write(withToken(app, '/healthz').repeat(2));
      assert.deepEqual([(await valid.response()).status, (await valid.response()).status], [200, 200]);
    } finally {
      valid.destroy();
      await app.close();
    }
  });
});

describe('requests waiting for their answers, per address', () => {
  it('past MAX_IN_FLIGHT_PER_ADDRESS across its connections, a request closes its connection; other addresses are served, and a slot frees when an answer ends', { timeout: 60_000 }, async () => {
    const app = await startApp({ logLevel: 'silent', limits: { maxInFlightPerAddress: 2, sendTimeoutMs: 120_000 }, catalogue: books(3000) });
    const stalled: Socket[] = [];
    let refused: RawConnection | undefined;
    try {
      for (let i = 0; i < 2; i++) {
        const socket = await openPaused(app.port);
        // Read the head, then stop: the rest of the answer stays in flight.
        const head = new Promise<void>((resolve) => socket.once('data', () => resolve()));
        socket.write(withToken(app, '/books'));
        socket.resume();
        await within('the head of GET /books', head);
        socket.pause();
        stalled.push(socket);
      }
      refused = await openConnection(app.port);
      refused.write(HEALTHZ);
      await assert.rejects(within('the third request from one address', refused.response()), /closed before a complete response/);
      assert.equal(await healthzFrom(app, OTHER_ADDRESS), 200);
      (stalled.shift() as Socket).destroy();
      await until('a request from the first address answered once one of its answers ended', async () => (await healthzFrom(app, '127.0.0.1').catch(() => 0)) === 200);
    } finally {
      for (const socket of stalled) socket.destroy();
      refused?.destroy();
      await app.close();
    }
  });

  it('over TLS the same: the requests on the TLS connections of one address are counted together', { timeout: 60_000 }, async () => {
    const fixtures = new URL('./fixtures/tls/', import.meta.url);
    const tls = { cert: readFileSync(new URL('cert.pem', fixtures)), key: readFileSync(new URL('key.pem', fixtures)) };
    const app = await startApp({ logLevel: 'silent', tls, limits: { maxInFlightPerAddress: 1, sendTimeoutMs: 120_000 }, catalogue: books(3000) });
    const sockets: Socket[] = [];
    const open = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: app.port, servername: 'localhost', ca: tls.cert });
        sockets.push(socket);
        socket.once('error', reject);
        socket.once('secureConnect', () => {
          socket.off('error', reject);
          socket.on('error', () => {});
          resolve(socket);
        });
      });
    try {
      const first = await open();
      const head = new Promise<void>((resolve) => first.once('data', () => resolve()));
      first.write(withToken(app, '/books'));
      await within('the head of GET /books over TLS', head);
      first.pause();
      const second = await open();
      let received = '';
      second.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      second.write(HEALTHZ);
      await within('the second TLS connection, whose request is one too many for the address, closed', new Promise((resolve) => second.once('close', resolve)));
      assert.equal(received, '', 'closed without an answer');
    } finally {
      for (const socket of sockets) socket.destroy();
      await app.close();
    }
  });
});

/**
 * Resolves once the server has seen `count` connections that arrive after this call close. The
 * guard's own 'close' listener, added when the connection arrived, has run by then.
 */
function closedOnServer(app: TestApp, count: number): Promise<void> {
  return new Promise((resolve) => {
    let arrived = 0;
    let closed = 0;
    const onConnection = (socket: Socket): void => {
      if (++arrived === count) app.server.off('connection', onConnection);
      socket.once('close', () => {
        if (++closed === count) resolve();
      });
    };
    app.server.on('connection', onConnection);
  });
}

describe('what an address holds is given back', () => {
  it('a closed connection frees its place: pair after pair from one address, with MAX_CONNECTIONS_PER_ADDRESS 2, each is served', async () => {
    const app = await startApp({ logLevel: 'silent', limits: { maxConnectionsPerAddress: 2 } });
    try {
      for (let round = 1; round <= 3; round++) {
        const closed = closedOnServer(app, 2);
        const pair = [await openConnection(app.port), await openConnection(app.port)];
        for (const conn of pair) {
          conn.write(HEALTHZ);
          const answer = await within(`round ${round}: an answer`, conn.response().catch((err: Error) => ({ status: err.message })));
          assert.equal(answer.status, 200, `round ${round}: the connections of the rounds before were closed`);
        }
        for (const conn of pair) conn.destroy();
        await within(`round ${round}: the server closing both connections`, closed);
      }
    } finally {
      await app.close();
    }
  });

  it('an answered request frees its slot: one connection makes more requests in a row than MAX_IN_FLIGHT_PER_ADDRESS, each answered', async () => {
    const app = await startApp({ logLevel: 'silent', limits: { maxInFlightPerAddress: 2 } });
    const conn = await openConnection(app.port);
    try {
      for (let i = 1; i <= 5; i++) {
        conn.write(HEALTHZ);
        const answer = await within(`answer ${i}`, conn.response().catch((err: Error) => ({ status: err.message })));
        assert.equal(answer.status, 200, `request ${i}, the ones before it answered`);
      }
    } finally {
      conn.destroy();
      await app.close();
    }
  });
});

describe('the per-address limits lift with 0 (behind a reverse proxy every client has its address)', () => {
  it('MAX_CONNECTIONS_PER_ADDRESS=0 and MAX_IN_FLIGHT_PER_ADDRESS=0: one address opens more connections than the default and is served on each', { timeout: 60_000 }, async () => {
    const app = await startApp({ logLevel: 'silent', limits: { maxConnectionsPerAddress: 0, maxInFlightPerAddress: 0 } });
    const conns: RawConnection[] = [];
    const count = TRANSPORT_LIMITS.maxConnectionsPerAddress + 16;
    try {
      for (let i = 0; i < count; i++) conns.push(await openConnection(app.port));
      for (const conn of conns) conn.write(HEALTHZ);
      const statuses = await Promise.all(conns.map((conn) => within('an answer on every connection', conn.response()).then((r) => r.status)));
      assert.deepEqual(new Set(statuses), new Set([200]));
      assert.equal(await connectionCount(app.server), count);
    } finally {
      for (const conn of conns) conn.destroy();
      await app.close();
    }
  });
});

describe('GET /events streams per address', () => {
  it('GET /events on connections from one address hold MAX_EVENT_STREAMS_PER_ADDRESS streams, one more is 503; another address still gets one', { timeout: 60_000 }, async () => {
    const app = await startApp({ logLevel: 'silent' });
    const conns: RawConnection[] = [];
    try {
      for (let i = 0; i < 16; i++) conns.push(await openConnection(app.port));
      for (const conn of conns) conn.write(withToken(app, '/events'));
      const first = await Promise.all(conns.map((conn) => within('the stream on each connection', conn.response({ head: true })).then((r) => r.status)));
      assert.deepEqual(new Set(first), new Set([200]));
      assert.equal(app.server.app.eventStreams, 16);
      const other = await openConnection(app.port, OTHER_ADDRESS);
      conns.push(other);
      other.write(withToken(app, '/events'));
      assert.equal((await within(`GET /events from ${OTHER_ADDRESS}`, other.response({ head: true }))).status, 200);
      const again = await openConnection(app.port);
      conns.push(again);
      again.write(withToken(app, '/events'));
      const refused = await within('one more from the first address', again.response());
      assert.deepEqual([refused.status, refused.headers['retry-after'], refused.json], [503, '5', { status: 503, message: 'Too many event streams', data: null }]);
    } finally {
      for (const conn of conns) conn.destroy();
      await app.close();
    }
  });

  it('maxStreamsPerAddress 0 lifts it: only MAX_EVENT_STREAMS applies', async () => {
    const app = await startApp({ logLevel: 'silent', eventStreams: { maxStreamsPerAddress: 0, maxStreams: 20 } });
    const conns: RawConnection[] = [];
    try {
      for (let i = 0; i < 20; i++) {
        const conn = await openConnection(app.port);
        conns.push(conn);
        conn.write(withToken(app, '/events'));
        assert.equal((await conn.response({ head: true })).status, 200, `stream ${i + 1}`);
      }
    } finally {
      for (const conn of conns) conn.destroy();
      await app.close();
    }
  });
});
