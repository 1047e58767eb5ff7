import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { needsPostgres, startCluster, type Cluster } from './helpers/postgres.ts';
import { killAll, startMain, type RunningService } from './helpers/process.ts';
import { changeSeqs, openEvents, type EventsClient } from './helpers/sse-client.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { until } from './helpers/wait.ts';

const SECRET = 'processes-test-secret-at-least-32-bytes-long';
const PASSWORD = 'one password for every process';
const token = (): string => signToken('admin', Buffer.from(SECRET), Date.now() / 1000);
const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'Two Processes', year: 2024 });

async function call(service: RunningService, method: string, path: string, body?: unknown): Promise<{ status: number; json: { data: unknown }; headers: Headers }> {
  const res = await fetch(service.url + path, { method, headers: { authorization: token(), 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: res.status, headers: res.headers, json: (await res.json()) as { data: unknown } };
}

const events = (service: RunningService, since: number): Promise<EventsClient> => openEvents(`${service.url}/events?since=${since}`, { authorization: token() });

/** The feed's last seq as the service says it (GET /changes' X-Last-Seq). */
async function lastSeq(service: RunningService): Promise<number> {
  return Number((await call(service, 'GET', '/changes?limit=1')).headers.get('x-last-seq'));
}

/** Every seq from `from` + 1 to `to`, once each, in order: what a follower must have seen. */
function assertEverySeq(seqs: readonly number[], from: number, to: number, who: string): void {
  const expected = Array.from({ length: to - from }, (_, i) => from + 1 + i);
  if (seqs.length === expected.length && seqs.every((s, i) => s === expected[i])) return;
  const missing = expected.filter((s) => !seqs.includes(s));
  const repeated = seqs.filter((s, i) => seqs.indexOf(s) !== i);
  assert.fail(`${who}: ${seqs.length} frames for ${expected.length} changes; missing ${missing.slice(0, 10).join(',')}; repeated ${repeated.slice(0, 10).join(',')}; out of order: ${seqs.some((s, i) => i > 0 && s < (seqs[i - 1] as number))}`);
}

describe('several processes on one PostgreSQL catalogue', needsPostgres(), () => {
  const temp = tempDirs('pg-processes-');
  let cluster: Cluster;
  let url: string;
  const start = async (): Promise<RunningService> =>
    startMain({
      args: ['--port', '0', '--host', '127.0.0.1', '--no-ui'],
      cwd: await temp.make(),
      env: { STORE_URL: url, SECRET_TOKEN: SECRET, AUTH_PASSWORD: PASSWORD, LOG_LEVEL: 'info', MAX_CONNECTIONS_PER_ADDRESS: '0', MAX_IN_FLIGHT_PER_ADDRESS: '0', MAX_EVENT_STREAMS_PER_ADDRESS: '0' },
    });
  let a: RunningService;
  let b: RunningService;

  before(async () => {
    // The service processes load the package's build (dist/), as in a user's checkout: `npm test` builds it first.
    cluster = await startCluster();
    url = await cluster.createDatabase();
    [a, b] = await Promise.all([start(), start()]);
  });
  after(async () => {
    await killAll();
    await cluster?.remove();
    await temp.removeAll();
  });

  it('a write through A is in B\'s GET /books at once, and on B\'s /events', async () => {
    const from = await lastSeq(b);
    const stream = await events(b, from);
    try {
      const created = await call(a, 'POST', '/book', book('Written through A'));
      assert.equal(created.status, 201);
      const { id } = created.json.data as { id: number };
      // No wait: B's read waits for B's memory to hold what the database had committed when it arrived.
      const listed = await call(b, 'GET', '/books');
      assert.ok((listed.json.data as { id: number }[]).some((x) => x.id === id), 'B lists the book A just created');
      assert.equal((await call(b, 'PUT', `/book/${id}`, { year: 1999 })).status, 200, 'B updates it without a 404');
      await stream.until((frames) => changeSeqs(frames).length >= 2);
      assertEverySeq(changeSeqs(stream.frames), from, from + 2, 'B\'s stream');
      // A client that followed A moves to B with the seq A sent it last: B resumes there, no reset.
      const onA = await call(a, 'POST', '/book', book('the last one A sent'));
      const resumed = await openEvents(`${b.url}/events`, { authorization: token(), 'last-event-id': String(from + 3) });
      try {
        await call(a, 'DELETE', `/book/${(onA.json.data as { id: number }).id}`);
        await resumed.until((frames) => changeSeqs(frames).includes(from + 4));
        assert.deepEqual(resumed.frames.map((f) => [f.event, f.id]), [['deleted', String(from + 4)]]);
      } finally {
        resumed.close();
      }
    } finally {
      stream.close();
    }
  });

  it('with writers on both at once, every follower of either sees every change once, in seq order', async () => {
    const from = await lastSeq(a);
    const followers = await Promise.all([events(a, from), events(b, from), events(a, from), events(b, from)]);
    try {
      const ids: number[] = [];
      const writer = async (service: RunningService, n: number): Promise<void> => {
        for (let i = 0; i < 40; i++) {
          const created = await call(service, 'POST', '/book', book(`concurrent ${n}.${i}`));
          assert.equal(created.status, 201);
          ids.push((created.json.data as { id: number }).id);
          if (i % 3 === 0) assert.equal((await call(service, 'PUT', `/book/${ids[(i * 7) % ids.length]}`, { year: i })).status, 200);
        }
      };
      await Promise.all(Array.from({ length: 8 }, (_, n) => writer(n % 2 === 0 ? a : b, n)));
      const to = await lastSeq(a);
      assert.equal(await lastSeq(b), to, 'both processes at the same seq');
      for (const [i, follower] of followers.entries()) {
        await follower.until((frames) => changeSeqs(frames).includes(to));
        assertEverySeq(changeSeqs(follower.frames), from, to, `follower ${i} of ${i % 2 === 0 ? 'A' : 'B'}`);
      }
      // Every frame is the change /changes has under that seq, on both processes.
      const fromA = (await call(a, 'GET', `/changes?since=${from}`)).json.data as { seq: number }[];
      assert.deepEqual((await call(b, 'GET', `/changes?since=${from}`)).json.data, fromA);
      assert.deepEqual(followers[1]?.frames.filter((f) => f.data !== undefined && f.id !== undefined).map((f) => JSON.parse(f.data as string) as unknown), fromA);
    } finally {
      for (const follower of followers) follower.close();
    }
  });

  it('SIGKILL of A mid-write loses nothing A acknowledged: B has every such book', async () => {
    const acked = new Map<number, string>();
    let killed = false;
    const writer = async (n: number): Promise<void> => {
      for (let i = 0; !killed; i++) {
        const title = `before the kill ${n}.${i}`;
        try {
          const created = await call(a, 'POST', '/book', book(title));
          if (created.status === 201) acked.set((created.json.data as { id: number }).id, title);
        } catch {
          return; // the connection died with the process: this one was never acknowledged
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, n) => writer(n));
    await until('A acknowledging 100 creates', () => acked.size >= 100);
    killed = true;
    await a.stop('SIGKILL');
    await Promise.all(writers);
    const listed = (await call(b, 'GET', '/books')).json.data as { id: number; title: string }[];
    const titles = new Map(listed.map((x) => [x.id, x.title]));
    assert.deepEqual([...acked].filter(([id, title]) => titles.get(id) !== title), [], 'acknowledged books missing on B');
    a = await start();
    assert.deepEqual(await lastSeq(a), await lastSeq(b));
  });

  it('a database restart: writes fail with 500 and /readyz is 503 while it is down; then both resume by themselves, streams included', async () => {
    const from = await lastSeq(b);
    const stream = await events(b, from);
    try {
      await cluster.stop();
      for (const service of [a, b]) await until('/readyz 503 while the database is down', async () => (await fetch(`${service.url}/readyz`)).status === 503);
      assert.equal((await call(a, 'POST', '/book', book('while down'))).status, 500);
      assert.equal((await call(b, 'GET', '/books?limit=1')).status, 200, 'reads answer from memory meanwhile');
      await cluster.start();
      for (const service of [a, b]) await until('/readyz 200 once the database is back', async () => (await fetch(`${service.url}/readyz`)).status === 200);
      const created = await call(a, 'POST', '/book', book('after the restart'));
      assert.equal(created.status, 201);
      const to = await lastSeq(a);
      await stream.until((frames) => changeSeqs(frames).includes(to));
      assertEverySeq(changeSeqs(stream.frames), from, to, 'B\'s stream across the restart');
      assert.equal((await call(b, 'GET', `/book/${(created.json.data as { id: number }).id}`)).status, 200);
    } finally {
      stream.close();
    }
  });
});
