import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ChangesUnavailableError, openStore } from '../src/index.ts';
import { MemoryBudget } from '../src/memory/budget.ts';
import { ChangeLog, RETAINED_CHANGES, retainedBytes } from '../src/store/change-log.ts';
import type { ChangeEntry } from '../src/store/change.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('store-changes-');
after(() => temp.removeAll());

const entry = (seq: number): ChangeEntry => ({ seq, type: 'created', id: seq, bookJson: `{"id":${seq}}` });
const range = (from: number, to: number): ChangeEntry[] => Array.from({ length: to - from + 1 }, (_, i) => entry(from + i));
/** What the retained changes cost, by retainedBytes. */
const heldBytes = (log: ChangeLog): number => range(log.oldest + 1, log.seq).reduce((n, e) => n + retainedBytes(e), 0);

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

  it('charges the budget for every retained change, as retained_changes; a snapshot drops those beyond RETAINED_CHANGES', () => {
    const budget = new MemoryBudget(1024 * 1024 * 1024);
    const log = new ChangeLog(0, [], () => {}, 0, budget);
    log.append(range(1, RETAINED_CHANGES));
    assert.equal(budget.heldBy('retained_changes'), heldBytes(log), 'the fixed retention is charged too');
    log.append(range(RETAINED_CHANGES + 1, RETAINED_CHANGES + 3));
    assert.equal(budget.heldBy('retained_changes'), heldBytes(log));
    log.snapshotTaken(RETAINED_CHANGES + 3);
    assert.equal(log.oldest, 3);
    assert.equal(budget.heldBy('retained_changes'), heldBytes(log));
  });

  it('when the budget is spent, drops the oldest changes until it is not, and at least half of them, the last RETAINED_CHANGES too', () => {
    const limit = 100 * retainedBytes(entry(1));
    const budget = new MemoryBudget(limit);
    const log = new ChangeLog(0, [], () => {}, 0, budget);
    for (let seq = 1; seq <= RETAINED_CHANGES + 1000; seq += 10) log.append(range(seq, seq + 9));
    assert.ok(budget.heldBy('retained_changes') <= limit);
    assert.equal(budget.heldBy('retained_changes'), heldBytes(log));
    assert.ok(log.seq - log.oldest <= 100, `${log.seq - log.oldest} changes retained`);
    assert.deepEqual(log.after(log.seq - 1, 5), [entry(log.seq)], 'the latest changes stay');
    const before = log.oldest;
    const held = log.seq - log.oldest;
    log.append(range(log.seq + 1, log.seq + 100));
    assert.ok(log.oldest - before >= held / 2, 'a shed frees at least half of what the changes held');
  });

  it('a recovered log holding more changes than the budget allows drops the oldest at once', () => {
    const limit = 100 * retainedBytes(entry(1));
    const budget = new MemoryBudget(limit);
    const log = new ChangeLog(RETAINED_CHANGES + 5000, range(1, RETAINED_CHANGES + 5000), () => {}, 0, budget);
    assert.ok(budget.heldBy('retained_changes') <= limit);
    assert.equal(budget.heldBy('retained_changes'), heldBytes(log));
    assert.ok(log.oldest >= RETAINED_CHANGES + 4900);
    assert.deepEqual(log.after(log.seq - 1, 1), [entry(log.seq)]);
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
