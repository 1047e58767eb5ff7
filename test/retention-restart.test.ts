import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RETAINED_CHANGES } from '../src/store/change-log.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { changes, type WireChange } from './helpers/changes-client.ts';
import { recordingFs } from './helpers/recording-fs.ts';
import { changeSeqs, openEvents, type SseFrame } from './helpers/sse-client.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const dirs = tempDirs('retention-restart-');
after(() => dirs.removeAll());

/** Options for a store whose compactions happen only when the test asks; fsync skipped (retention, not durability). */
function retentionStore(): { fs: ReturnType<typeof recordingFs>['fs']; compaction: { minBytes: number } } {
  const rec = recordingFs();
  rec.realSync = false;
  return { fs: rec.fs, compaction: { minBytes: 1 << 30 } };
}

/** `count` (a multiple of 100) changes through the store, 100 a round: creates, updates and deletes. */
async function makeChanges(app: TestApp, count: number): Promise<void> {
  const alive: number[] = [];
  for (let round = 0; round < count / 100; round++) {
    const creates = round === 0 ? 100 : 60;
    const updated = alive.splice(0, round === 0 ? 0 : 25);
    const deleted = alive.splice(0, round === 0 ? 0 : 15);
    const results = await Promise.all([
      ...Array.from({ length: creates }, (_, i) => app.store.create({ title: `Book ${round}.${i}`, author: 'A. Author', year: 2000 })),
      ...updated.map((id) => app.store.update(id, { year: 1800 + round })),
      ...deleted.map((id) => app.store.remove(id)),
    ]);
    // Every update names a year no book has yet (creates use 2000), so each is a change: an update that
    // changes nothing publishes none (docs/contract.md, "Books").
    assert.ok(results.every((r) => r !== undefined && r !== false), 'every change changed something');
    alive.push(...updated, ...results.slice(0, creates).map((b) => (b as { id: number }).id));
  }
}

function changesSince(app: TestApp, since: number): ReturnType<typeof changes> {
  return changes(app, `?since=${since}&limit=1000`);
}

/** Every change after `since`, following the pages to the end (each answered 200). */
async function allSince(app: TestApp, since: number): Promise<WireChange[]> {
  const all: WireChange[] = [];
  for (;;) {
    const page = await changesSince(app, all.at(-1)?.seq ?? since);
    assert.equal(page.status, 200, page.message);
    if (page.data.length === 0) return all;
    all.push(...page.data);
  }
}

async function restarted(dataDir: string, storeOptions: ReturnType<typeof retentionStore>): Promise<TestApp> {
  return startApp({ dataDir, storeOptions });
}

describe('retention across a restart (docs/contract.md, "Change feed"): the last RETAINED_CHANGES survive a compaction followed by a restart', () => {
  it('right after a compaction and a restart, a client 50 changes behind gets exactly those 50, by /changes and by /events', async () => {
    const dataDir = await dirs.make();
    const storeOptions = retentionStore();
    let app = await startApp({ dataDir, storeOptions });
    let seq: number;
    let missed: WireChange[];
    try {
      await makeChanges(app, 400);
      seq = app.store.feed.seq;
      missed = (await changesSince(app, seq - 50)).data;
      assert.equal(missed.length, 50);
      assert.ok(missed.some((c) => c.type === 'updated') && missed.some((c) => c.type === 'deleted'), 'every kind of change is among them');
      await app.store.compact();
    } finally {
      await app.close({ keepData: true });
    }
    assert.match(await readFile(join(dataDir, 'snapshot.json'), 'utf8'), /^\{"format":"book-catalogue-snapshot","version":2,/);
    app = await restarted(dataDir, storeOptions);
    try {
      assert.ok(app.store.stats.journalBytes < 100, 'the journal holds no change: they come from the snapshot');
      const answer = await changesSince(app, seq - 50);
      assert.equal(answer.status, 200);
      assert.deepEqual(answer.data, missed, 'the same seqs, types, ids and books as before the restart');

      const stream = await openEvents(`${app.url}/events`, { authorization: app.token(), 'last-event-id': String(seq - 50) });
      await app.request('POST', '/book', { body: { title: 'Live', author: 'A. Author', year: 2001 } });
      const frames = await stream.until((f: SseFrame[]) => changeSeqs(f).includes(seq + 1));
      stream.close();
      assert.deepEqual(changeSeqs(frames), [...missed.map((c) => c.seq), seq + 1], 'the missed 50, then the live one: no gap, no duplicate');
      assert.deepEqual(frames.filter((f) => f.id !== undefined && Number(f.id) <= seq).map((f) => JSON.parse(f.data as string) as WireChange), missed);
    } finally {
      await app.close();
    }
  });

  it(`after a compaction and a restart, every since back to ${RETAINED_CHANGES} changes is answered; one further is 410 and a reset frame`, async () => {
    const dataDir = await dirs.make();
    const storeOptions = retentionStore();
    let app = await startApp({ dataDir, storeOptions });
    let window: WireChange[];
    try {
      await makeChanges(app, RETAINED_CHANGES + 300);
      window = await allSince(app, app.store.feed.seq - RETAINED_CHANGES);
      await app.store.compact();
    } finally {
      await app.close({ keepData: true });
    }
    app = await restarted(dataDir, storeOptions);
    try {
      const seq = app.store.feed.seq;
      assert.equal(seq, RETAINED_CHANGES + 300);
      assert.equal(window.length, RETAINED_CHANGES);
      assert.deepEqual(await allSince(app, seq - RETAINED_CHANGES), window, 'the same 10,000 changes, page by page, as before the compaction and restart');
      const gone = await changesSince(app, seq - RETAINED_CHANGES - 1);
      assert.deepEqual([gone.status, gone.message], [410, 'Changes no longer available']);

      const reset = await openEvents(`${app.url}/events?since=${seq - RETAINED_CHANGES - 1}`, { authorization: app.token() });
      const frames = await reset.until((f: SseFrame[]) => f.some((x) => x.event === 'reset'));
      reset.close();
      assert.deepEqual(frames[0], { id: String(seq), event: 'reset', data: String(seq) });
    } finally {
      await app.close();
    }
  });
});
