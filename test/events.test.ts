import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { signToken, TOKEN_LIFETIME_SECONDS } from '../src/auth/jwt.ts';
import type { BookStore } from '../src/store/book-store.ts';
import { startApp, storeWith, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';
import { loginToken } from './helpers/login.ts';
import { killAll, startMain } from './helpers/process.ts';
import { gate, ioError, recordingFs } from './helpers/recording-fs.ts';
import { openConnection, requestText, sendThenHalfClose, type RawConnection } from './helpers/raw.ts';
import { changeSeqs, openEvents, type EventsClient, type SseFrame } from './helpers/sse-client.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { until, within } from './helpers/wait.ts';

const temp = tempDirs('events-');
after(() => temp.removeAll());

const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'A. Author', year: 2001 });

function events(app: TestApp, query = '', headers: Record<string, string> = {}): Promise<EventsClient> {
  return openEvents(`${app.url}/events${query}`, { authorization: app.token(), ...headers });
}

/** While `held` is set, what a store waits for: to catch up (as the PostgreSQL store may), or to create. */
interface Hold {
  held?: Promise<void> | undefined;
}

/** A store that is catching up while `hold.held` is set: streams open once it resolves. */
const catchingUp = (hold: Hold): ((real: BookStore) => BookStore) => storeWith(() => ({ caughtUp: () => hold.held }));

/** The stream request, as its bytes go out. */
const streamRequest = (app: TestApp, query = ''): string => requestText('GET', `/events${query}`, { authorization: app.token() });

const hasSeq = (seq: number) => (frames: SseFrame[]) => changeSeqs(frames).includes(seq);
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('GET /events', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('streams each durable create, update and delete live as one frame: id, event, data', async () => {
    const stream = await events(app);
    try {
      assert.equal(stream.status, 200);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(stream.headers.get('cache-control'), 'no-store, no-transform');
      assert.equal(stream.headers.get('x-accel-buffering'), 'no', 'nginx-style proxies are asked not to hold frames back');
      await app.request('POST', '/book', { body: book('Live') });
      await app.request('PUT', '/book/1', { body: { year: 1999 } });
      await app.request('DELETE', '/book/1');
      const frames = (await stream.until(hasSeq(3))).filter((f) => f.id !== undefined);
      assert.deepEqual(frames, [
        { id: '1', event: 'created', data: '{"seq":1,"type":"created","id":1,"book":{"id":1,"title":"Live","author":"A. Author","year":2001}}' },
        { id: '2', event: 'updated', data: '{"seq":2,"type":"updated","id":1,"book":{"id":1,"title":"Live","author":"A. Author","year":1999}}' },
        { id: '3', event: 'deleted', data: '{"seq":3,"type":"deleted","id":1,"book":null}' },
      ]);
    } finally {
      stream.close();
    }
  });

  it('errors before the stream starts are envelopes: 401 without a token, 400 for a bad resume point (Bad request when it is the Last-Event-ID header)', async () => {
    const anonymous = await openEvents(`${app.url}/events`, {});
    assert.equal(anonymous.status, 401);
    assert.deepEqual(JSON.parse(anonymous.text), { status: 401, message: 'Authorization token required', data: null });
    const rows = [
      ['?since=abc', {}, 'Invalid query'],
      ['', { 'last-event-id': 'x1' }, 'Bad request'],
      ['?since=1', { 'last-event-id': 'x1' }, 'Bad request'],
      ['?since=1&since=2', {}, 'Invalid query'],
    ] as const;
    for (const [query, headers, message] of rows) {
      const bad = await events(app, query, headers);
      assert.equal(bad.status, 400);
      assert.deepEqual(JSON.parse(bad.text), { status: 400, message, data: null }, `${query} ${JSON.stringify(headers)}`);
    }
    const bearer = await openEvents(`${app.url}/events`, { authorization: `Bearer ${app.token()}` });
    assert.equal(bearer.status, 200);
    bearer.close();
  });

  it('HEAD answers the stream head and ends', async () => {
    const res = await fetch(`${app.url}/events`, { method: 'HEAD', headers: { authorization: app.token() } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  });

  it('resumes by Last-Event-ID and by ?since= with exactly the missed changes (Last-Event-ID wins)', async () => {
    for (let i = 0; i < 4; i++) await app.request('POST', '/book', { body: book(`Missed ${i}`) });
    const bySince = await events(app, '?since=4');
    const byHeader = await events(app, '?since=1', { 'last-event-id': '5' });
    try {
      await bySince.until(hasSeq(7));
      await byHeader.until(hasSeq(7));
      assert.deepEqual(changeSeqs(bySince.frames), [5, 6, 7]);
      assert.deepEqual(changeSeqs(byHeader.frames), [6, 7]);
      await app.request('POST', '/book', { body: book('Then live') });
      await bySince.until(hasSeq(8));
      assert.deepEqual(changeSeqs(bySince.frames), [5, 6, 7, 8]);
    } finally {
      bySince.close();
      byHeader.close();
    }
  });

  it('no gap and no duplicate at the seam when writes race the reconnect', async () => {
    const start = app.store.feed.seq;
    let writing = true;
    const writers = Array.from({ length: 8 }, async () => {
      for (let i = 0; writing && i < 200; i++) await app.request('POST', '/book', { body: book(`Race ${i}`) });
    });
    const streams: EventsClient[] = [];
    // Reconnect repeatedly while the writes go on, each time from a seq some way back.
    for (let k = 0; k < 10; k++) {
      const since = Math.max(start, app.store.feed.seq - 5);
      const stream = await events(app, `?since=${since}`);
      streams.push(stream);
      (stream as EventsClient & { since?: number }).since = since;
    }
    writing = false;
    await Promise.all(writers);
    const last = app.store.feed.seq;
    try {
      for (const stream of streams) {
        await stream.until(hasSeq(last));
        const since = (stream as EventsClient & { since?: number }).since as number;
        assert.deepEqual(changeSeqs(stream.frames), range(since + 1, last));
      }
    } finally {
      for (const s of streams) s.close();
    }
  });

  it('a seq past the last change or older than retained: one reset frame with the current seq, then live changes', async () => {
    const seq = app.store.feed.seq;
    const stream = await events(app, `?since=${seq + 100}`);
    try {
      await stream.until((f) => f.length >= 1);
      assert.deepEqual(stream.frames[0], { id: String(seq), event: 'reset', data: String(seq) });
      await app.request('POST', '/book', { body: book('After reset') });
      await stream.until(hasSeq(seq + 1));
      assert.deepEqual(changeSeqs(stream.frames), [seq + 1]);
    } finally {
      stream.close();
    }
  });
});

describe('GET /events limits and lifetime', () => {
  it("ends with event: expired at the token's exp (by the app's clock), after the changes it had", async () => {
    // The app's clock runs 898.5 s ahead of the real one, and the token is signed 2 s ahead of it
    // (whole seconds): by the app's clock it was signed 896.5 s ago and expires 2.5 to 3.5 s later,
    // time enough to open the stream and see a live change on a loaded machine.
    const now = (): number => Date.now() + 898_500;
    const app = await startApp({ now });
    try {
      assert.equal((await app.request('POST', '/book', { body: book('Before expiry') })).status, 201);
      const signedAt = Math.floor(Date.now() / 1000 + 2);
      const token = signToken(TEST_USER, Buffer.from(TEST_SECRET), signedAt);
      const exp = signedAt + TOKEN_LIFETIME_SECONDS;
      const stream = await openEvents(`${app.url}/events?since=0`, { authorization: token });
      // Still open after its backlog: a live change reaches it.
      assert.equal((await app.request('POST', '/book', { body: book('While open') })).status, 201);
      await stream.until(hasSeq(2));
      await within("the stream ended at its token's exp", stream.ended);
      // Node's timers may fire up to a millisecond before their delay by Date.now().
      assert.ok(now() >= exp * 1000 - 2, `ended ${exp * 1000 - now()} ms before exp by the app's clock`);
      const frames = stream.frames.filter((f) => f.comment === undefined);
      assert.deepEqual(frames.at(-1), { event: 'expired', data: '2' });
      assert.deepEqual(changeSeqs(frames), [1, 2]);
      assert.equal(app.server.app.eventStreams, 0);
    } finally {
      await app.close();
    }
  });

  it('sends a heartbeat comment every heartbeat interval', async () => {
    const app = await startApp({ eventStreams: { heartbeatMs: 20 } });
    const stream = await events(app);
    try {
      await stream.until((f) => f.some((x) => x.comment === 'heartbeat'), 'a heartbeat comment, due every 20 ms');
    } finally {
      stream.close();
      await app.close();
    }
  });

  it("a client's half-close ends its stream after what was written, frees its slot and closes the connection, whether it came before the stream began or during it", async () => {
    // The first stream opens only once the server has read the client's FIN.
    const hold: Hold = {};
    const app = await startApp({ wrapStore: catchingUp(hold) });
    const halfClosing = (query: string, ready?: () => Promise<void>): Promise<string> => sendThenHalfClose(app.port, streamRequest(app, query), ready === undefined ? {} : { ready });
    try {
      assert.equal((await app.request('POST', '/book', { body: book('Backlog') })).status, 201);
      const finRead = gate();
      hold.held = finRead.promise;
      app.server.once('connection', (socket: Socket) => socket.once('end', finRead.open));
      const early = await within('the server closed the stream half-closed before it began', halfClosing('?since=0'));
      hold.held = undefined;
      assert.match(early, /^HTTP\/1\.1 200 /);
      assert.match(early, /\nid: 1\nevent: created\ndata: \{"seq":1,/, 'the backlog came before the end');
      const during = await within(
        'the server closed the stream half-closed while open',
        halfClosing('', () => until('the stream open', () => app.server.app.eventStreams === 1)),
      );
      assert.match(during, /^HTTP\/1\.1 200 /);
      await until('both slots free', () => app.server.app.eventStreams === 0);
      // A connection closed before the stream began (here by the server, as a send timeout would):
      // its slot is not kept either.
      const closed = gate();
      hold.held = closed.promise;
      app.server.once('request', (req: IncomingMessage) => {
        req.socket.once('close', closed.open);
        req.socket.destroy();
      });
      const cut = connect(app.port, '127.0.0.1', () => cut.write(streamRequest(app)));
      cut.on('error', () => {});
      await within('the connection closed', closed.promise);
      hold.held = undefined;
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(app.server.app.eventStreams, 0, 'no slot kept for the closed connection');
    } finally {
      await app.close();
    }
  });

  it('a stream queued behind another answer on its connection ends when the connection is reset or half-closed', async () => {
    // A create that waits for `hold.held`: the stream pipelined behind it waits for the socket.
    const hold: Hold = {};
    const slowCreates = storeWith((real) => ({
      create: async (fields) => {
        await hold.held;
        return real.create(fields);
      },
    }));
    const app = await startApp({ wrapStore: slowCreates });
    try {
      const body = JSON.stringify(book('Ahead of a stream'));
      for (const how of ['reset', 'half-close'] as const) {
        const create = gate();
        hold.held = create.promise;
        const socket = connect(app.port, '127.0.0.1');
        socket.on('error', () => {});
        await once(socket, 'connect');
        socket.write(requestText('POST', '/book', { authorization: app.token(), body }) + streamRequest(app));
        await until('the queued stream open', () => app.server.app.eventStreams === 1);
        if (how === 'reset') socket.resetAndDestroy();
        else socket.end();
        await until(`its slot free after a ${how}`, () => app.server.app.eventStreams === 0);
        create.open();
        hold.held = undefined;
      }
    } finally {
      await app.close();
    }
  });

  it('requests pipelined behind a stream are not run (RFC 9112 §9.6), whether it is open or waits for the store to catch up; the stream goes on', async () => {
    const hold: Hold = {};
    const app = await startApp({ logLevel: 'warn', wrapStore: catchingUp(hold) });
    const post = requestText('POST', '/book', { authorization: app.token(), body: JSON.stringify(book('Behind a stream')) });
    const stream = streamRequest(app);
    const conns: RawConnection[] = [];
    try {
      // While the store catches up (the stream opens later); in the same read as the stream's
      // request; after the stream began.
      const caughtUp = gate();
      hold.held = caughtUp.promise;
      let arrived = 0;
      app.server.on('request', () => arrived++);
      const waiting = await openConnection(app.port);
      conns.push(waiting);
      waiting.write(stream + post);
      await until('both requests in while the store catches up', () => arrived === 2);
      hold.held = undefined;
      caughtUp.open();
      await until('its stream open', () => app.server.app.eventStreams === 1);
      const together = await openConnection(app.port);
      conns.push(together);
      together.write(stream + post);
      const later = await openConnection(app.port);
      conns.push(later);
      later.write(stream);
      await until('three streams open', () => app.server.app.eventStreams === 3);
      later.write(post);
      await until('the last request in', () => arrived === 6);
      assert.equal((await app.request('POST', '/book', { body: book('Beside the streams') })).status, 201);
      for (const conn of conns) assert.equal((await within('the stream head', conn.response({ head: true }))).status, 200);
      assert.deepEqual(((await app.request('GET', '/books')).json.data as { title: string }[]).map((b) => b.title), ['Beside the streams']);
      assert.ok(app.logs.some((l) => (JSON.parse(l) as { msg: string }).msg === 'requests not run: pipelined behind an answer that closes their connection'), app.logs.join('\n'));
    } finally {
      for (const conn of conns) conn.destroy();
      await app.close();
    }
  });

  it("a request not run behind a stream has its body read and dropped, so the client's FIN still ends the stream", async () => {
    const app = await startApp();
    try {
      const big = 'x'.repeat(300_000);
      const socket = connect(app.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      socket.write(streamRequest(app));
      await until('the stream open', () => app.server.app.eventStreams === 1);
      socket.end(requestText('POST', '/book', { authorization: app.token(), body: big }));
      socket.resume();
      await until('the stream ended on the FIN', () => app.server.app.eventStreams === 0);
    } finally {
      await app.close();
    }
  });

  it('503 Too many event streams with Retry-After past the limit; a slot frees when a stream closes', async () => {
    const app = await startApp({ eventStreams: { maxStreams: 2 } });
    try {
      const a = await events(app);
      const b = await events(app);
      const refused = await events(app);
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.deepEqual(JSON.parse(refused.text), { status: 503, message: 'Too many event streams', data: null });
      a.close();
      await a.ended;
      for (let i = 0; i < 1000 && app.server.app.eventStreams > 1; i++) await new Promise((r) => setImmediate(r));
      const c = await events(app);
      assert.equal(c.status, 200);
      b.close();
      c.close();
    } finally {
      await app.close();
    }
  });

  it('a client that does not read is cut off; other streams and writes go on', async () => {
    // The writers' connections stay open between waves. With the 5 s default, a connection left
    // idle while the test process waited that long for a turn raced the server closing it, and a
    // write failed with "other side closed": client and server share this process's event loop.
    const app = await startApp({ eventStreams: { maxUnsentBytes: 64 * 1024 }, limits: { keepAliveTimeoutMs: 60_000 } });
    const reader = await events(app);
    const stalled = connect(app.port, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => stalled.once('connect', () => resolve()));
      stalled.write(`GET /events HTTP/1.1\r\nHost: x\r\nAuthorization: ${app.token()}\r\n\r\n`);
      stalled.pause();
      await until('the unread stream open beside the reader', () => app.server.app.eventStreams >= 2);
      const big = { title: 'x'.repeat(1000), author: 'y'.repeat(1000), year: 1 };
      let created = 0;
      // Bounded: socket buffers fill (a few MB on loopback), then 64 KiB more cuts the stream.
      for (let round = 0; round < 400 && app.server.app.eventStreams === 2; round++) {
        const answers = await Promise.all(Array.from({ length: 20 }, () => app.request('POST', '/book', { body: big })));
        assert.ok(answers.every((r) => r.status === 201));
        created += answers.length;
      }
      assert.equal(app.server.app.eventStreams, 1, 'the stalled stream was cut');
      await app.request('POST', '/book', { body: book('After the cut') });
      await reader.until(hasSeq(created + 1));
      assert.deepEqual(changeSeqs(reader.frames), range(1, created + 1));
      assert.ok(app.logs.some((l) => l.includes('event stream cut off')));
    } finally {
      stalled.destroy();
      reader.close();
      await app.close();
    }
  });

  it('streams are closed as the drain starts, so shutdown does not wait for them', async () => {
    const app = await startApp();
    const streams = await Promise.all([events(app), events(app, '?since=0')]);
    // A grace far longer than the wait: only closing the streams ends the drain in time.
    await within('shutdown with two event streams open (a 60 s grace)', app.server.shutdown(60_000));
    await within('both streams ended by the drain', Promise.all(streams.map((s) => s.ended)));
    assert.equal(app.server.app.eventStreams, 0);
    await app.close();
  });

  it('never streams a change whose write failed (EIO, ENOSPC injected)', async () => {
    const rec = recordingFs();
    const app = await startApp({ storeOptions: { fs: rec.fs } });
    const stream = await events(app);
    try {
      await app.request('POST', '/book', { body: book('Kept 1') });
      for (const code of ['EIO', 'ENOSPC']) {
        rec.hooks.datasync = () => {
          delete rec.hooks.datasync;
          throw ioError(code);
        };
        assert.equal((await app.request('POST', '/book', { body: book(`Failed ${code}`) })).status, 500);
      }
      await app.request('POST', '/book', { body: book('Kept 2') });
      await stream.until(hasSeq(2));
      const data = stream.frames.filter((f) => f.data !== undefined).map((f) => JSON.parse(f.data as string) as { seq: number; book: { title: string } });
      assert.deepEqual(data.map((c) => [c.seq, c.book.title]), [
        [1, 'Kept 1'],
        [2, 'Kept 2'],
      ]);
    } finally {
      stream.close();
      await app.close();
    }
  });
});

describe('GET /events across restarts and compactions', () => {
  it('a client resumes after a restart and after a compaction with exactly what it missed', async () => {
    const dataDir = await temp.make();
    let app = await startApp({ dataDir });
    const first = await events(app);
    await app.request('POST', '/book', { body: book('One') });
    await app.request('POST', '/book', { body: book('Two') });
    await first.until(hasSeq(2));
    const lastSeen = 2;
    await app.request('PUT', '/book/1', { body: { year: 1990 } });
    await app.close();
    await within('the stream ended by the shutdown', first.ended);
    app = await startApp({ dataDir });
    try {
      await app.request('DELETE', '/book/2');
      const resumed = await events(app, '', { 'last-event-id': String(lastSeen) });
      await resumed.until(hasSeq(4));
      assert.deepEqual(
        resumed.frames.map((f) => [f.id, f.event]),
        [
          ['3', 'updated'],
          ['4', 'deleted'],
        ],
      );
      resumed.close();
      await app.store.compact();
      await app.request('POST', '/book', { body: book('Three') });
      const afterCompaction = await events(app, '?since=3');
      await afterCompaction.until(hasSeq(5));
      assert.deepEqual(changeSeqs(afterCompaction.frames), [4, 5]);
      afterCompaction.close();
    } finally {
      await app.close();
    }
  });
});

describe('GET /events and SIGTERM', () => {
  after(killAll);

  it('the process exits 0 promptly on SIGTERM with streams open (they close as the drain starts)', async () => {
    const dataDir = await temp.make();
    const service = await startMain({
      args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
      env: { SECRET_TOKEN: 'events-sigterm-secret-that-is-32-bytes-or-more', AUTH_PASSWORD: 'pw', LOG_LEVEL: 'info' },
      cwd: dataDir,
    });
    const token = await loginToken(service.url, 'pw');
    const streams = await Promise.all([1, 2, 3].map(() => openEvents(`${service.url}/events`, { authorization: token })));
    assert.ok(streams.every((s) => s.status === 200));
    const exit = await service.stop('SIGTERM');
    assert.equal(exit.code, 0, exit.stderr);
    // A stream still open when the drain ends would hold it to the 10 s limit and be counted as cut off there.
    assert.match(exit.stdout, /stopped cleanly/);
    await Promise.all(streams.map((s) => s.ended));
  });
});
