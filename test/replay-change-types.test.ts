import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../src/store/open.ts';
import { holdSnapshot, recordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('replay-change-types-');

describe('recovery replays the journal after a snapshot with each change typed as it was made', () => {
  after(temp.removeAll);

  it('books created while the snapshot was being written are "created" after a restart, not "updated"', async () => {
    const dir = await temp.make();
    const rec = recordingFs();
    rec.realSync = false; // this test is about what replay says, not durability
    const store = await openStore(dir, { fs: rec.fs, compaction: { chunkBooks: 2, minBytes: 1 << 30 } });
    for (let i = 1; i <= 6; i++) await store.create({ title: `Before ${i}`, author: 'A', year: 2000 });
    const hold = holdSnapshot(rec);
    const compaction = store.compact();
    await hold.reached;
    const done: string[] = [];
    for (let i = 7; i <= 9; i++) {
      await store.create({ title: `During ${i}`, author: 'B', year: 2001 });
      done.push('created');
    }
    await store.update(1, { year: 1999 });
    await store.remove(2);
    await store.update(7, { year: 1998 });
    await store.remove(8);
    await store.update(3, { title: 'Changed' });
    done.push('updated', 'deleted', 'updated', 'deleted', 'updated');
    hold.release();
    await compaction;
    await store.create({ title: 'After', author: 'C', year: 2002 });
    await store.update(9, { year: 1997 });
    done.push('created', 'updated');

    const snapshot = await readFile(join(dir, 'snapshot.json'), 'utf8');
    assert.match(snapshot, /^\{"format":"book-catalogue-snapshot","version":\d+,"seq":6,"nextId":7,/);
    const before = store.changes(6);
    assert.deepEqual(before.map((c) => c.type), done, 'the live feed says what was done');
    await store.close();

    const reopened = await openStore(dir);
    try {
      assert.deepEqual(reopened.changes(6), before, 'replay gives every change the same seq, type, id and book');
      assert.equal((await reopened.create({ title: 'Next', author: 'D', year: 2003 })).id, 11);
    } finally {
      await reopened.close();
    }
  });
});
