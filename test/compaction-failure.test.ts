import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createLogger, createMetrics, MemoryBudget, openStore, type DurableBookStore } from '../src/index.ts';
import { RETAINED_CHANGES, retainedBytes } from '../src/store/change-log.ts';
import { CompactionFailures, FAILURE_LOG_INTERVAL_MS } from '../src/store/compaction-failures.ts';
import { startApp } from './helpers/app.ts';
import { noFreeInodes } from './helpers/no-free-inodes.ts';
import { openEvents } from './helpers/sse-client.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { until } from './helpers/wait.ts';

const temp = tempDirs('compaction-failure-');
after(() => temp.removeAll());

/** `n` updates of book 1 (the store holds it), in waves of 1000 written together. */
async function updates(store: DurableBookStore, n: number, each?: () => void): Promise<void> {
  for (let done = 0; done < n; done += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, n - done) }, (_, i) => store.update(1, { title: `Edition ${done + i}` })));
    each?.();
  }
}

/** The error lines a logger wrote that are about compaction failing. */
function failureLines(lines: readonly string[]): string[] {
  return lines.filter((l) => l.includes('"level":50') && l.includes('compaction'));
}

describe('compaction failing: the retained changes draw from the memory budget', () => {
  /** Room for 64 KiB of changes beyond the last 10,000, which are charged too (`{"id":1,"title":"Edition 29999",…}` each). */
  const EXTRA = 64 * 1024;
  const LIMIT = RETAINED_CHANGES * retainedBytes({ seq: 1, type: 'updated', id: 1, bookJson: '{"id":1,"title":"Edition 29999","author":"A","year":2000}' }) + EXTRA;

  it('while every compaction fails and writes go on, the changes kept beyond the last 10,000 stay within a small budget; the last 10,000 stay, and the journal keeps every change', async () => {
    const dir = await temp.make();
    const disk = noFreeInodes();
    const budget = new MemoryBudget(LIMIT);
    const store = await openStore(dir, { fs: disk.fs, memoryBudget: budget, compaction: { minBytes: 4096, retryMs: 1 } });
    await store.create({ title: 'One book', author: 'A', year: 2000 });
    disk.fail();
    let most = 0;
    await updates(store, 3 * RETAINED_CHANGES, () => {
      most = Math.max(most, budget.heldBy('retained_changes'));
    });
    assert.ok(disk.attempts() > 0 && store.stats.compactions === 0, 'compaction was tried and failed');
    const { seq, oldest } = store.feed;
    assert.equal(seq, 3 * RETAINED_CHANGES + 1);
    const retained = store.feed.after(oldest, seq) ?? [];
    const held = retained.slice(0, seq - oldest - RETAINED_CHANGES);
    const extraBytes = held.reduce((n, e) => n + retainedBytes(e), 0);
    assert.ok(extraBytes <= EXTRA, `the extra changes held in memory: ${held.length}, ${extraBytes} bytes`);
    const heldBytes = retained.reduce((n, e) => n + retainedBytes(e), 0);
    assert.ok(most > 0 && most <= LIMIT, `the budget saw ${most} bytes of retained changes at most`);
    assert.equal(budget.heldBy('retained_changes'), heldBytes, 'what is charged is what is held');
    assert.ok(budget.shedCount('retained_changes') > 0);
    const fixed = store.changes(seq - RETAINED_CHANGES, RETAINED_CHANGES);
    assert.equal(fixed.length, RETAINED_CHANGES, 'the last RETAINED_CHANGES are all there');
    assert.equal(fixed[0]?.seq, seq - RETAINED_CHANGES + 1);
    await store.close();
    assert.equal(budget.heldBy('retained_changes'), 0, 'a closed store holds nothing');
    const reopened = await openStore(dir);
    try {
      assert.equal(reopened.feed.oldest, 0, 'the journal on disk still holds every change');
      assert.equal(reopened.changes(0, 1)[0]?.seq, 1);
    } finally {
      await reopened.close();
    }
  });

  it('GET /changes from before the kept changes answers 410 with X-Last-Seq, and GET /events a reset; from within the last 10,000 both answer the changes', async () => {
    const disk = noFreeInodes();
    const budget = new MemoryBudget(LIMIT);
    // The store's budget is small, to make it drop changes; the streams below are the app's, with a
    // budget of their own: a resumed stream's backlog of 10,000 changes would not fit in this one.
    const app = await startApp({ storeOptions: { fs: disk.fs, memoryBudget: budget, compaction: { minBytes: 4096, retryMs: 1 } } });
    try {
      await app.store.create({ title: 'One book', author: 'A', year: 2000 });
      disk.fail();
      await updates(app.store, RETAINED_CHANGES + 5000);
      const seq = app.store.feed.seq;
      assert.ok(app.store.feed.oldest > 0, 'the budget dropped the oldest extra changes');
      const gone = await app.request('GET', '/changes?since=0');
      assert.deepEqual([gone.status, gone.json.message, gone.headers.get('x-last-seq')], [410, 'Changes no longer available', String(seq)]);
      const kept = await app.request('GET', `/changes?since=${seq - RETAINED_CHANGES}&limit=2`);
      assert.equal(kept.status, 200);
      assert.deepEqual((kept.json.data as { seq: number }[]).map((c) => c.seq), [seq - RETAINED_CHANGES + 1, seq - RETAINED_CHANGES + 2]);
      const headers = { authorization: app.token() };
      const reset = await openEvents(`${app.url}/events?since=0`, headers);
      const resumed = await openEvents(`${app.url}/events?since=${seq - RETAINED_CHANGES}`, headers);
      try {
        await reset.until((f) => f.length >= 1);
        assert.deepEqual(reset.frames[0], { id: String(seq), event: 'reset', data: String(seq) });
        await resumed.until((f) => f.length >= 1);
        assert.deepEqual([resumed.frames[0]?.id, resumed.frames[0]?.event], [String(seq - RETAINED_CHANGES + 1), 'updated']);
      } finally {
        reset.close();
        resumed.close();
      }
    } finally {
      await app.close();
    }
  });
});

describe('compaction failing: pacing, metric and log', () => {
  it('after a failure the next attempt waits for its backoff, however much is written meanwhile', async () => {
    const dir = await temp.make();
    const disk = noFreeInodes();
    const minBytes = 4096;
    const store = await openStore(dir, { fs: disk.fs, compaction: { minBytes, retryMs: 3_600_000 } });
    try {
      await store.create({ title: 'One book', author: 'A', year: 2000 });
      disk.fail();
      await updates(store, 5000);
      assert.ok(store.stats.journalBytes > 50 * minBytes, 'far more journal than the minimum was written');
      assert.equal(disk.attempts(), 1, 'one attempt: every later write falls within its backoff');
    } finally {
      await store.close();
    }
  });

  it('retries by itself once the backoff has passed, with no write, and succeeds once the disk works', async () => {
    const dir = await temp.make();
    const disk = noFreeInodes();
    const store = await openStore(dir, { fs: disk.fs, compaction: { minBytes: 1, ratio: 0, retryMs: 5, maxRetryMs: 5 } });
    try {
      disk.fail();
      await store.create({ title: 'One book', author: 'A', year: 2000 });
      await until('a second attempt without a write', () => disk.attempts() >= 2);
      disk.heal();
      await until('a compaction on the timer', () => store.stats.compactions === 1);
    } finally {
      await store.close();
    }
  });

  it('counts every failure in book_catalogue_compaction_failures_total, and logs the first, then nothing within a minute, then once that it works again', async () => {
    const dir = await temp.make();
    const disk = noFreeInodes();
    const metrics = createMetrics();
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
    const store = await openStore(dir, { fs: disk.fs, logger, observer: metrics.storeObserver, compaction: { minBytes: 1, ratio: 0, retryMs: 1, maxRetryMs: 1 } });
    const failures = (): number => {
      const m = /^book_catalogue_compaction_failures_total (\d+)$/m.exec(metrics.registry.expose());
      return Number(m?.[1]);
    };
    try {
      assert.equal(failures(), 0);
      disk.fail();
      await store.create({ title: 'One book', author: 'A', year: 2000 });
      await until('50 failed attempts', () => disk.attempts() >= 50);
      assert.ok(failures() >= 50, `the counter says ${failures()}`);
      assert.equal(failureLines(lines).length, 1, `one line for ${failures()} failures: ${failureLines(lines).join('')}`);
      assert.equal(JSON.parse(failureLines(lines)[0] as string).retryInMs, 1);
      disk.heal();
      await until('a compaction', () => store.stats.compactions === 1);
      const recovered = lines.filter((l) => l.includes('compaction works again'));
      assert.equal(recovered.length, 1);
      assert.ok(JSON.parse(recovered[0] as string).failures >= 50);
      await store.create({ title: 'Another', author: 'A', year: 2001 });
      await until('another compaction', () => store.stats.compactions === 2);
      assert.equal(lines.filter((l) => l.includes('compaction works again')).length, 1, 'a success after a success says nothing');
    } finally {
      await store.close();
      metrics.close();
    }
  });
});

describe('CompactionFailures (pacing and log of a run of failures)', () => {
  const pacing = { retryMs: 1000, maxRetryMs: 60_000 };

  it('waits twice as long after each failure up to the cap, and from the start again after a success', () => {
    const failures = new CompactionFailures(createLogger({ level: 'silent', write: () => {} }), pacing, () => 0);
    const waits = Array.from({ length: 9 }, () => failures.failed(new Error('ENOSPC')));
    assert.deepEqual(waits, [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000, 60_000]);
    failures.succeeded();
    assert.equal(failures.failed(new Error('ENOSPC')), 1000);
  });

  it('is failing from the third failure in a row until a success', () => {
    const failures = new CompactionFailures(createLogger({ level: 'silent', write: () => {} }), pacing, () => 0);
    const seen: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      failures.failed(new Error('ENOSPC'));
      seen.push(failures.failing);
    }
    assert.deepEqual(seen, [false, false, true, true]);
    failures.succeeded();
    assert.equal(failures.failing, false);
  });

  it('logs the first failure, then at most one line a minute with the failures since the last line', () => {
    let clock = 0;
    const lines: string[] = [];
    const failures = new CompactionFailures(createLogger({ level: 'info', write: (l) => lines.push(l) }), pacing, () => clock);
    for (; clock < 3 * FAILURE_LOG_INTERVAL_MS; clock += 1000) failures.failed(new Error('ENOSPC'));
    const logged = failureLines(lines).map((l) => JSON.parse(l) as { msg: string; failures?: number; consecutive?: number });
    assert.deepEqual(
      logged.map((l) => [l.failures, l.consecutive]),
      [[undefined, undefined], [60, 61], [60, 121]],
      'the first, then one line a minute counting the 60 failures since',
    );
    failures.succeeded();
    assert.equal(lines.filter((l) => l.includes('compaction works again') && l.includes('"failures":180')).length, 1);
  });
});
