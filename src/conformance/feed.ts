import assert from 'node:assert/strict';
import { ERROR_CODES, isFault } from '../faults.ts';
import type { ChangeEntry } from '../store/change.ts';
import type { DurableBookStore } from '../store/book-store.ts';
import { book, caughtUp, within, wholeFeed, withStores, type ConformanceTarget, type TestFunctions } from './target.ts';

/** Resolves with every batch the store's feed publishes from now until its seq reaches `seq`. */
function published(store: DurableBookStore, seq: number): Promise<ChangeEntry[]> {
  const seen: ChangeEntry[] = [];
  return within(
    `the feed reaching seq ${seq}`,
    new Promise((resolve) => {
      const unsubscribe = store.feed.subscribe((batch) => {
        seen.push(...batch);
        if (store.feed.seq >= seq) {
          unsubscribe();
          resolve(seen);
        }
      });
    }),
  );
}

function assertContiguous(seqs: readonly number[], from: number, what: string): void {
  const gaps = seqs.filter((seq, i) => seq !== from + i);
  assert.deepEqual(gaps, [], `${what}: seqs ${seqs.join(',')} do not run from ${from} without gap or repeat`);
}

/** The change feed: every durable change once, in commit order, on every store of the catalogue. */
export function feedRules(target: ConformanceTarget, { describe, it }: TestFunctions): void {
  describe('change feed', () => {
    it('each create, update and delete is one change, seqs from 1, each with the book after it', () =>
      withStores(target, async (a) => {
        assert.equal(a.feed.seq, 0);
        const created = await a.create(book(1));
        await a.update(created.id, { title: 'Renamed' });
        await a.remove(created.id);
        const json = (title: string): string => JSON.stringify({ ...created, title });
        assert.deepEqual(wholeFeed(a), [
          { seq: 1, type: 'created', id: created.id, bookJson: json(created.title) },
          { seq: 2, type: 'updated', id: created.id, bookJson: json('Renamed') },
          { seq: 3, type: 'deleted', id: created.id, bookJson: null },
        ]);
        assert.deepEqual(a.changes(1, 1).map((c) => c.seq), [2]);
        assert.equal(a.feed.after(4, 10), undefined, 'a seq past the last change is another history');
        assert.throws(() => a.changes(4), (err) => isFault(err, ERROR_CODES.changesUnavailable));
      }));

    it('with writers on every store at once, every store publishes every change once, in seq order, with no gap, and all agree', () =>
      withStores(target, async (a, b) => {
        const writes = 60;
        const last = writes;
        const seenA = published(a, last);
        const seenB = published(b, last);
        await Promise.all(Array.from({ length: writes }, (_, i) => (i % 2 === 0 ? a : b).create(book(i))));
        const [onA, onB] = await Promise.all([seenA, seenB]);
        assertContiguous(onA.map((e) => e.seq), 1, 'published on the first store');
        assertContiguous(onB.map((e) => e.seq), 1, 'published on the second store');
        assert.deepEqual(onA, onB);
        assert.deepEqual(wholeFeed(a), onA);
      }));

    it('reading `after(seq)` and subscribing in the same turn misses nothing and repeats nothing', () =>
      withStores(target, async (a, b) => {
        for (let n = 0; n < 5; n++) await b.create(book(n));
        await caughtUp(a);
        const from = a.feed.seq - 2;
        const backlog = a.feed.after(from, 100) ?? [];
        const live = published(a, a.feed.seq + 10);
        await Promise.all(Array.from({ length: 10 }, (_, i) => b.create(book(i))));
        const seqs = [...backlog, ...(await live)].map((e) => e.seq);
        assertContiguous(seqs, from + 1, 'backlog then live');
      }));

    it('a store opened on a catalogue resumes its feed where it was: the next change follows the last seq', async () => {
      await withStores(target, async (a, _b, catalogue) => {
        await a.create(book(1));
        await a.create(book(2));
        await a.close();
        const reopened = await catalogue.open();
        try {
          assert.equal(reopened.feed.seq, 2);
          await reopened.create(book(3));
          assert.deepEqual(reopened.feed.after(1, 10)?.map((e) => e.seq), [2, 3]);
        } finally {
          await reopened.close();
        }
      });
    });
  });
}
