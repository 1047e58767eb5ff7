import assert from 'node:assert/strict';
import { book, caughtUp, withStores, type ConformanceTarget, type TestFunctions } from './target.ts';

/** Ids: every create gets one no book ever had, concurrently, after deletes and after a reopen. */
export function idRules(target: ConformanceTarget, { describe, it }: TestFunctions): void {
  describe('ids', () => {
    it('concurrent creates on every store get distinct ids, each above every id given before it was asked for', () =>
      withStores(target, async (a, b) => {
        const first = await a.create(book(0));
        const created = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).create(book(i + 1))));
        const ids = created.map((c) => c.id);
        assert.equal(new Set(ids).size, ids.length, `ids repeat: ${ids.join(',')}`);
        assert.ok(ids.every((id) => id > first.id), `an id not above ${first.id}: ${ids.join(',')}`);
      }));

    it('the id of a deleted book is never given again, also after every store was closed and reopened', async () => {
      let last = 0;
      await withStores(target, async (a, _b, catalogue) => {
        for (let n = 1; n <= 3; n++) last = (await a.create(book(n))).id;
        assert.equal(await a.remove(last), true);
        await a.close();
        const reopened = await catalogue.open();
        try {
          const next = await reopened.create(book(4));
          assert.ok(next.id > last, `id ${next.id} after deleting ${last}`);
          assert.equal(reopened.getJson(last), undefined);
        } finally {
          await reopened.close();
        }
      });
    });

    it('a create on one store is readable on the other once it has caught up', () =>
      withStores(target, async (a, b) => {
        const created = await a.create(book(7));
        await caughtUp(b);
        assert.equal(b.getJson(created.id), JSON.stringify({ id: created.id, ...book(7) }));
      }));
  });
}
