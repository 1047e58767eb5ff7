import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ChangesUnavailableError, openStore } from '../src/index.ts';
import { ChangeLog, RETAINED_CHANGES } from '../src/store/change-log.ts';
import type { ChangeEntry } from '../src/store/change.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('store-changes-');
after(() => temp.removeAll());

const entry = (seq: number): ChangeEntry => ({ seq, type: 'created', id: seq, bookJson: `{"id":${seq}}` });
const range = (from: number, to: number): ChangeEntry[] => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));

describe('ChangeLog (the retention buffer)', () => {
  it('keeps every change since the last snapshot, even past RETAINED_CHANGES', () => {
    const log = new ChangeLog(0, [], () => {});
    log.append(range(1, RETAINED_CHANGES + 500));
    assert.equal(log.oldest, 0, 'no snapshot yet: everything is retained');
    log.snapshotTaken(RETAINED_CHANGES + 100);
    assert.equal(log.oldest, 500, 'after the snapshot: the last RETAINED_CHANGES only');
    assert.equal(log.after(499, 1), undefined);
    assert.deepEqual(log.after(500, 2), [entry(501), entry(502)]);
  });

  it('keeps the last RETAINED_CHANGES even when a snapshot covers them', () => {
    const log = new ChangeLog(0, [], () => {});
    log.snapshotTaken(0);
    for (let seq = 1; seq <= RETAINED_CHANGES * 3; seq++) log.append([entry(seq)]);
    log.snapshotTaken(RETAINED_CHANGES * 3);
    assert.equal(log.oldest, RETAINED_CHANGES * 2);
    assert.deepEqual(log.after(RETAINED_CHANGES * 3 - 1, 5), [entry(RETAINED_CHANGES * 3)]);
  });

  it('a listener that throws is dropped and reported; the others still get the batch', () => {
    const errors: unknown[] = [];
    const log = new ChangeLog(0, [], (err) => errors.push(err));
    const got: number[] = [];
    log.subscribe(() => {
      throw new Error('bad listener');
    });
    log.subscribe((batch) => got.push(...batch.map((e) => e.seq)));
    log.append([entry(1)]);
    log.append([entry(2)]);
    assert.deepEqual(got, [1, 2]);
    assert.equal(errors.length, 1);
  });
});

describe('store.changes(since) and store.feed', () => {
  it('lists durable changes as objects and throws ChangesUnavailableError past the retained window', async () => {
    const dir = await temp.make();
    const store = await openStore(dir);
    try {
      const seen: number[] = [];
      const unsubscribe = store.feed.subscribe((batch) => seen.push(...batch.map((e) => e.seq)));
      await store.create({ title: 'T', author: 'A', year: 1 });
      await store.update(1, { year: 2 });
      unsubscribe();
      await store.remove(1);
      assert.deepEqual(seen, [1, 2]);
      assert.deepEqual(store.changes(1), [
        { seq: 2, type: 'updated', id: 1, book: { id: 1, title: 'T', author: 'A', year: 2 } },
        { seq: 3, type: 'deleted', id: 1, book: null },
      ]);
      assert.throws(() => store.changes(4), (err: unknown) => {
        assert.ok(err instanceof ChangesUnavailableError);
        assert.deepEqual([err.since, err.oldest, err.latest], [4, 0, 3]);
        assert.equal(err.message, 'changes after 4 are not available: the feed holds those after 0, up to 3; reload the books, then follow from 3');
        return true;
      });
    } finally {
      await store.close();
    }
  });
});
