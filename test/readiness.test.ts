import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { after, describe, it } from 'node:test';
import { openStore } from '../src/index.ts';
import { PROBE_FILE } from '../src/store/write-probe.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { noFreeInodes } from './helpers/no-free-inodes.ts';
import { ioError, recordingFs, type RecordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { until } from './helpers/wait.ts';

const READY = { status: 200, message: 'OK', data: { status: 'ready' } };
const NOT_READY = { status: 503, message: 'Not ready', data: null };
/** Probes run this often in these tests; the service's default is 5 s. */
const PROBE_MS = 5;

async function readyz(app: TestApp): Promise<unknown> {
  return (await app.request('GET', '/readyz', { auth: false })).json;
}

/** Bounded polling of /readyz until it gives `want` (the probe runs on its own timer). */
async function readyzBecomes(app: TestApp, want: unknown): Promise<unknown> {
  let last: unknown;
  await until(`GET /readyz answering ${JSON.stringify(want)}`, async () => JSON.stringify((last = await readyz(app))) === JSON.stringify(want));
  return last;
}

/** Bounded wait until the probe has tried `n` more times (counted by the file layer's hook). */
async function probesTried(count: () => number, n: number): Promise<void> {
  const target = count() + n;
  await until(`the probe trying ${n} more times`, () => count() >= target);
}

/** A full disk: every write fails (cutting the journal back still works), until healed. */
function failingDisk(rec: RecordingFs): { probes: () => number; heal: () => void } {
  let probes = 0;
  rec.hooks.write = (file) => {
    if (file === PROBE_FILE) probes++;
    throw ioError('ENOSPC');
  };
  return { probes: () => probes, heal: () => delete rec.hooks.write };
}

describe('GET /readyz', () => {
  it('answers 200 OK {"status":"ready"} while a write would be accepted, HEAD too, without a token', async () => {
    const app = await startApp();
    try {
      assert.deepEqual(await readyz(app), READY);
      const head = await app.request('HEAD', '/readyz', { auth: false });
      assert.equal(head.status, 200);
    } finally {
      await app.close();
    }
  });

  it('flips to 503 Not ready on a failed write, and back to 200 by itself once the disk works (no client write)', async () => {
    const rec = recordingFs();
    const app = await startApp({ storeOptions: { fs: rec.fs, probeIntervalMs: PROBE_MS } });
    try {
      const disk = failingDisk(rec);
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 500);
      assert.deepEqual(await readyz(app), NOT_READY);
      // Liveness is not readiness: the process is fine, only writes are not.
      assert.equal((await app.request('GET', '/healthz', { auth: false })).status, 200);
      await probesTried(disk.probes, 3);
      assert.deepEqual(await readyz(app), NOT_READY, 'failed probes keep it not ready');
      disk.heal();
      assert.deepEqual(await readyzBecomes(app, READY), READY);
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 201);
      assert.ok(!(await readdir(app.dataDir)).includes(PROBE_FILE), 'the probe leaves no file behind');
    } finally {
      await app.close();
    }
  });

  it('a client write that succeeds also ends it', async () => {
    const rec = recordingFs();
    // A probe interval far beyond the test: only the write can make it ready.
    const app = await startApp({ storeOptions: { fs: rec.fs, probeIntervalMs: 3_600_000 } });
    try {
      const disk = failingDisk(rec);
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 500);
      assert.deepEqual(await readyz(app), NOT_READY);
      disk.heal();
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 201);
      assert.deepEqual(await readyz(app), READY);
    } finally {
      await app.close();
    }
  });

  it('stays 503 while the store is read-only until restart, even once the disk works', async () => {
    const rec = recordingFs();
    const app = await startApp({ storeOptions: { fs: rec.fs, probeIntervalMs: PROBE_MS } });
    try {
      const disk = failingDisk(rec);
      rec.hooks.truncate = () => {
        throw ioError('EIO');
      };
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 500);
      disk.heal();
      delete rec.hooks.truncate;
      assert.deepEqual(await readyz(app), NOT_READY);
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 500, 'writes are refused');
      assert.deepEqual(await readyz(app), NOT_READY);
    } finally {
      await app.close();
    }
  });

  it('stays 200 through one and two failed compactions, is 503 Not ready from the third in a row, and 200 again once one succeeds', async () => {
    const disk = noFreeInodes();
    // No retry on the clock within the test: each attempt is the one asked for.
    const app = await startApp({ storeOptions: { fs: disk.fs, compaction: { retryMs: 3_600_000 } } });
    try {
      disk.fail();
      const seen: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        await assert.rejects(app.store.compact(), /ENOSPC/);
        seen.push(await readyz(app));
      }
      assert.deepEqual(seen, [READY, READY, NOT_READY]);
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 201, 'writes are still taken');
      disk.heal();
      await app.store.compact();
      assert.deepEqual(await readyz(app), READY);
    } finally {
      await app.close();
    }
  });

  it('after repeated failed compactions, comes back to 200 by itself (no client write) once the disk works', async () => {
    const disk = noFreeInodes();
    const app = await startApp({ storeOptions: { fs: disk.fs, compaction: { minBytes: 1, ratio: 0, retryMs: PROBE_MS, maxRetryMs: PROBE_MS } } });
    try {
      disk.fail();
      assert.equal((await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 } })).status, 201);
      assert.deepEqual(await readyzBecomes(app, NOT_READY), NOT_READY);
      disk.heal();
      assert.deepEqual(await readyzBecomes(app, READY), READY);
      assert.ok(app.store.stats.compactions >= 1);
    } finally {
      await app.close();
    }
  });

  it('is 503 Not ready while the service drains', async () => {
    const app = await startApp();
    let stopped: Promise<unknown> | undefined;
    app.server.prependOnceListener('request', () => {
      stopped = app.server.shutdown(5000);
    });
    const res = await app.request('GET', '/readyz', { auth: false });
    assert.deepEqual(res.json, NOT_READY);
    assert.equal(res.headers.get('connection'), 'close');
    await stopped;
    await app.close();
  });
});

describe('the store\'s write probe', () => {
  const dirs = tempDirs('book-catalogue-probe-');
  after(() => dirs.removeAll());

  it('a probe file a crash left is removed at the next start', async () => {
    const dir = await dirs.make();
    await writeFile(`${dir}/${PROBE_FILE}`, 'probe\n');
    const store = await openStore(dir);
    try {
      assert.ok(!(await readdir(dir)).includes(PROBE_FILE));
      assert.equal(store.writable, true);
    } finally {
      await store.close();
    }
    assert.equal(store.writable, false, 'a closed store accepts no write');
  });
});
