import assert from 'node:assert/strict';
import { cp, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../src/store/open.ts';
import { RETAINED_CHANGES } from '../src/store/change-log.ts';
import { COMPACTION_DEFAULTS } from '../src/store/compaction.ts';
import type { DurableBookStore } from '../src/store/book-store.ts';
import { createLogger } from '../src/log.ts';
import { holdSnapshot, ioError, recordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { bookIn, listJsonOf } from './helpers/store-books.ts';
import { until } from './helpers/wait.ts';

const temp = tempDirs('store-compaction-');
const tempDir = temp.make;

async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    // A compaction may rename or delete a file between the listing and the stat.
    total += (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** What a crash at this instant leaves: the files as they are now, opened by a new store. */
async function reopenCopy(dir: string): Promise<string> {
  const copy = await tempDir();
  await cp(dir, copy, { recursive: true });
  const store = await openStore(copy);
  const json = listJsonOf(store);
  await store.close();
  return json;
}

async function seed(store: DurableBookStore, n: number): Promise<void> {
  await Promise.all(Array.from({ length: n }, (_, i) => store.create({ title: `Book ${i}`, author: 'A. Author', year: 1900 + (i % 100) })));
}

describe('store compaction', () => {
  after(temp.removeAll);

  // Bounded whatever the number of updates: at most two snapshots (the old one and the one being
  // written), each carrying the last RETAINED_CHANGES changes (under 100 bytes each for these
  // books), plus the journals: the minimum a journal may always grow to (COMPACTION_DEFAULTS) and
  // 1 MB beyond it, for the batches written while a snapshot is.
  const bound = 2 * RETAINED_CHANGES * 100 + COMPACTION_DEFAULTS.minBytes + 1024 * 1024;
  it(`100k updates of the same 10 books keep the data directory under ${(bound / 1e6).toFixed(1)} MB`, async () => {
    const dir = await tempDir();
    const rec = recordingFs();
    rec.realSync = false; // this test is about size; durability is proven elsewhere
    const store = await openStore(dir, { fs: rec.fs });
    await seed(store, 10);
    let largest = 0;
    for (let wave = 0; wave < 100; wave++) {
      await Promise.all(Array.from({ length: 1000 }, (_, i) => store.update(1 + (i % 10), { year: wave, title: `Edition ${wave}.${i}` })));
      largest = Math.max(largest, await dirBytes(dir));
    }
    assert.ok(store.stats.compactions > 0);
    assert.equal(store.stats.records, 100_010);
    assert.ok(largest < bound, `the directory reached ${largest} bytes`);
    await store.close();
    const reopened = await openStore(dir);
    assert.equal(bookIn(reopened, 10)?.title, 'Edition 99.999');
    await reopened.close();
  });

  it('a new journal and every rename are followed by an fsync of the directory', async () => {
    const dir = await tempDir();
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs });
    await seed(store, 5);
    await store.compact();
    await store.create({ title: 'After', author: 'B', year: 2000 });
    await store.compact();
    await store.close();
    const e = rec.events;
    const after = (i: number): string | undefined => e.slice(i + 1).find((x) => !x.startsWith('close'));
    const renames = e.flatMap((x, i) => (x.startsWith('rename') ? [i] : []));
    const created = e.flatMap((x, i) => (x.startsWith('open(ax)') || x.startsWith('open(wx)') ? [i] : []));
    assert.equal(renames.length, 2);
    const dirSync = `syncDir ${basename(dir)}`;
    for (const i of renames) assert.equal(after(i), dirSync, `after ${e[i]}`);
    for (const i of created.filter((i) => (e[i] as string).includes('journal'))) assert.equal(after(i), dirSync, `after ${e[i]}`);
    for (const i of renames) assert.equal(e.slice(0, i).findLast((x) => x.includes('snapshot.json.tmp') && !x.startsWith('close')), 'sync snapshot.json.tmp');
  });

  it('writes during a compaction are acknowledged between snapshot chunks and survive a crash at any point', async () => {
    const dir = await tempDir();
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs, compaction: { chunkBooks: 10 } });
    await seed(store, 200);
    const hold = holdSnapshot(rec);
    const compaction = store.compact();
    await hold.reached;
    await Promise.all([store.update(5, { title: 'Changed mid-compaction' }), store.remove(150), store.create({ title: 'New', author: 'C', year: 2001 })]);
    assert.equal(await reopenCopy(dir), listJsonOf(store), 'a crash mid-compaction loses nothing');
    hold.release();
    const writes = Array.from({ length: 20 }, (_, i) => store.update(1 + i, { year: 1000 + i }));
    await Promise.all([compaction, ...writes]);
    const snapshotWrites = rec.events.flatMap((x, i) => (x === 'write snapshot.json.tmp' ? [i] : []));
    assert.ok(snapshotWrites.length >= 20, 'the snapshot is written in chunks');
    const first = snapshotWrites[0] as number;
    const last = snapshotWrites.at(-1) as number;
    assert.ok(rec.events.slice(first, last).some((x) => x.startsWith('datasync journal')), 'journal commits ran between chunks');
    assert.equal(await reopenCopy(dir), listJsonOf(store), 'and after it');
    const expected = listJsonOf(store);
    await store.close();
    const reopened = await openStore(dir);
    assert.equal(listJsonOf(reopened), expected);
    assert.equal((await reopened.create({ title: 'Next', author: 'D', year: 2002 })).id, 202);
    await reopened.close();
  });

  it('a small catalogue does not compact before its journal reaches the minimum size', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, { compaction: { minBytes: 4096 } });
    await seed(store, 20);
    assert.equal(store.stats.compactions, 0);
    await seed(store, 40);
    await until('a compaction once the journal passed the minimum', () => store.stats.compactions > 0);
    assert.ok((await readdir(dir)).includes('snapshot.json'));
    await store.close();
  });

  it('after a failed compaction the next try waits for its backoff, not the next write nor another minimum of journal', async () => {
    const dir = await tempDir();
    const rec = recordingFs();
    // Starting the new journal fails (a full disk): the current journal keeps growing.
    let full = false;
    const fs = { ...rec.fs, open: ((path, flags, mode) => (full && flags === 'ax' ? Promise.reject(ioError('ENOSPC')) : rec.fs.open(path, flags, mode))) as typeof rec.fs.open };
    const lines: string[] = [];
    const logger = createLogger({ level: 'error', write: (line) => lines.push(line) });
    const minBytes = 1000;
    // A backoff far beyond the test: no attempt can be due to the clock.
    const store = await openStore(dir, { fs, logger, compaction: { minBytes, retryMs: 3_600_000 } });
    full = true;
    const failures = (): number => lines.filter((l) => l.includes('compaction failed')).length;
    const write = () => store.create({ title: 'Growing the journal', author: 'A', year: 2000 });
    // Bounded: the journal passes minBytes within a dozen writes, and the first attempt fails.
    for (let i = 0; failures() === 0; i++) {
      assert.ok(i < 1000, 'no failed compaction in 1000 writes on a full disk');
      await write();
    }
    const failedAt = store.stats.journalBytes;
    while (store.stats.journalBytes < failedAt + minBytes - 200) await write();
    assert.equal(failures(), 1, 'no new attempt within a minimum of journal after the failure');
    full = false;
    // Retrying after each minimum of journal would try a disk that fails for good once per minBytes written.
    while (store.stats.journalBytes <= failedAt + 3 * minBytes) await write();
    assert.equal(store.stats.compactions, 0, 'nor after more than a minimum of journal');
    await store.compact();
    assert.equal(store.stats.compactions, 1, 'a compaction asked for is not held back by the backoff, and succeeds');
    await store.close();
  });
});
