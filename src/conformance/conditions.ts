import assert from 'node:assert/strict';
import { ERROR_CODES, isFault } from '../faults.ts';
import type { Book } from '../model/book.ts';
import type { DurableBookStore } from '../store/book-store.ts';
import { book, caughtUp, withStores, type ConformanceTarget, type TestFunctions } from './target.ts';

/** PreconditionFailedError, told by its code: the store may have its own copy of the faults' module. */
const refused = (err: unknown): boolean => isFault(err, ERROR_CODES.preconditionFailed);

/** Increments the book's year once, read-modify-write under the version it read, retrying on 412. */
async function increment(store: DurableBookStore, id: number): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    await caughtUp(store);
    const json = store.getJson(id) as string;
    const { year } = JSON.parse(json) as Book;
    try {
      await store.update(id, { year: year + 1 }, (current) => current === json);
      return attempt;
    } catch (err) {
      if (!refused(err)) throw err;
    }
  }
}

/** A condition on a write holds for exactly the version the write replaces, whoever writes meanwhile. */
export function conditionRules(target: ConformanceTarget, { describe, it }: TestFunctions): void {
  describe('version conditions', () => {
    it('of concurrent updates made on the same version, on every store, exactly one is written; the others fail with PreconditionFailedError', () =>
      withStores(target, async (a, b) => {
        const { id } = await a.create(book(1));
        await caughtUp(b);
        const version = a.getJson(id) as string;
        const outcomes = await Promise.allSettled(
          Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).update(id, { title: `winner ${i}` }, (current) => current === version)),
        );
        const written = outcomes.filter((o) => o.status === 'fulfilled');
        const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
        assert.equal(written.length, 1, `${written.length} writes made on one version`);
        assert.ok(failed.every((o) => refused(o.reason)), String(failed.find((o) => !refused(o.reason))?.reason));
        await caughtUp(a);
        const feed = a.feed.after(0, 100) ?? [];
        assert.equal(feed.filter((e) => e.type === 'updated').length, 1, 'one update in the feed');
      }));

    it('read-modify-write increments under their version, from both stores at once, lose none', () =>
      withStores(target, async (a, b) => {
        const { id, year } = await a.create(book(2));
        await caughtUp(b);
        await Promise.all(Array.from({ length: 24 }, (_, i) => increment(i % 2 === 0 ? a : b, id)));
        await caughtUp(a);
        assert.equal((JSON.parse(a.getJson(id) as string) as Book).year, year + 24);
      }));

    it('a conditional delete of a book changed since its version was read is refused, and the book stays', () =>
      withStores(target, async (a, b) => {
        const { id } = await a.create(book(3));
        await caughtUp(b);
        const version = b.getJson(id) as string;
        await a.update(id, { year: 1 });
        await assert.rejects(b.remove(id, (current) => current === version), refused);
        await caughtUp(b);
        assert.notEqual(b.getJson(id), undefined);
      }));

    it('an update of a book deleted meanwhile answers undefined (404 comes before 412), and a delete false', () =>
      withStores(target, async (a, b) => {
        const { id } = await a.create(book(4));
        assert.equal(await b.remove(id), true);
        assert.equal(await a.update(id, { year: 5 }, () => false), undefined);
        assert.equal(await a.remove(id, () => false), false);
      }));

    it('an update that changes nothing writes nothing and publishes no change', () =>
      withStores(target, async (a) => {
        const created = await a.create(book(5));
        const seq = a.feed.seq;
        assert.deepEqual(await a.update(created.id, { year: created.year }), created);
        assert.equal(a.feed.seq, seq);
      }));
  });
}
