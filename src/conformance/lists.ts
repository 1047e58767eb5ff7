import assert from 'node:assert/strict';
import { search } from '../books/search.ts';
import type { DurableBookStore } from '../store/book-store.ts';
import { book, caughtUp, wholeFeed, withStores, type ConformanceTarget, type TestFunctions } from './target.ts';

/** The books a list snapshot holds, as one JSON array text. */
async function listed(store: DurableBookStore): Promise<{ json: string; seq: number }> {
  const snapshot = await store.listSnapshot();
  // Read in the turn the snapshot resolved in, as GET /books does for its ETag.
  const seq = store.feed.seq;
  return { json: `[${snapshot.pages.map((p) => p.text).filter((t) => t !== '').join(',')}]`, seq };
}

/** The catalogue after the feed's changes up to `seq`, replayed from the start: the state `seq` names. */
function replayed(store: DurableBookStore, seq: number): string {
  const books = new Map<number, string>();
  for (const e of wholeFeed(store)) {
    if (e.seq > seq) break;
    if (e.bookJson === null) books.delete(e.id);
    else books.set(e.id, e.bookJson);
  }
  return `[${[...books].sort(([x], [y]) => x - y).map(([, json]) => json).join(',')}]`;
}

/** Case pairs that simple case folding joins or keeps apart (the `i` and `u` flags of a regular expression). */
const FOLDING: readonly { title: string; q: string; matches: boolean }[] = [
  { title: 'ǄEMAL', q: 'ǆemal', matches: true },
  { title: 'Ǆemal', q: 'ǅ', matches: true },
  { title: 'KELVIN', q: '\u212aelvin', matches: true },
  { title: 'ΟΔΥΣΣΕΥΣ', q: 'οδυσσευς', matches: true },
  { title: '𐐀𐐁 deseret', q: '𐐨𐐩', matches: true },
  { title: 'Straße', q: 'STRASSE', matches: false },
  { title: 'İstanbul', q: 'istanbul', matches: false },
  { title: 'quote " and \\ backslash', q: '" AND \\', matches: true },
  { title: 'e\u0301clair', q: 'éclair', matches: false },
];

/** A full list is one committed state; keyset pages and search read the same books. */
export function listRules(target: ConformanceTarget, { describe, it }: TestFunctions): void {
  describe('lists', () => {
    it('a full list taken while both stores write shows exactly the state of one seq: every change up to it and none after', () =>
      withStores(target, async (a, b) => {
        const ids: number[] = [];
        for (let n = 0; n < 40; n++) ids.push((await a.create(book(n))).id);
        let writing = true;
        const writers = [a, b].map(async (store, w) => {
          for (let n = 0; writing; n++) {
            const id = ids[(n * 7 + w) % ids.length] as number;
            if (n % 5 === 4) await store.remove(id).then(() => store.create(book(n)).then((c) => ids.push(c.id)));
            else await store.update(id, { year: n % 3000 });
          }
        });
        try {
          for (let round = 0; round < 30; round++) {
            for (const store of [a, b]) {
              const { json, seq } = await listed(store);
              assert.equal(json, replayed(store, seq), `the list of round ${round} is not the state of seq ${seq}`);
            }
          }
        } finally {
          writing = false;
          await Promise.all(writers);
        }
      }));

    it('keyset pages walk the books in ascending id order, each once, with `more` true until the last', () =>
      withStores(target, async (a, b) => {
        const ids: number[] = [];
        for (let n = 0; n < 30; n++) ids.push((await a.create(book(n))).id);
        for (const id of ids.filter((_, i) => i % 4 === 1)) await a.remove(id);
        await caughtUp(b);
        const expected = (await listed(b)).json;
        const pages: string[] = [];
        for (let after = 0, more = true; more; ) {
          const page = b.booksAfter(after, 7);
          pages.push(...page.books);
          more = page.more;
          if (page.books.length > 0) after = (JSON.parse(page.books.at(-1) as string) as { id: number }).id;
          assert.ok(page.books.length === 7 || !more, 'a short page says more follow');
        }
        assert.equal(`[${pages.join(',')}]`, expected);
        assert.deepEqual(b.booksAfter(Number.MAX_SAFE_INTEGER - 1, 5), { books: [], more: false });
        assert.equal(b.size, 30 - ids.filter((_, i) => i % 4 === 1).length);
      }));

    it('search finds what Unicode simple case folding joins, and only that', () =>
      withStores(target, async (a, b) => {
        for (const { title } of FOLDING) await a.create({ title, author: 'folding', year: 2000 });
        await caughtUp(b);
        const snapshot = await b.listSnapshot();
        for (const { title, q, matches } of FOLDING) {
          const found = await search(snapshot, { q, after: 0, limit: 100, abandoned: () => false });
          const titles = found?.books.map((json) => (JSON.parse(json) as { title: string }).title) ?? [];
          assert.equal(titles.includes(title), matches, `q ${JSON.stringify(q)} against ${JSON.stringify(title)}: found ${JSON.stringify(titles)}`);
        }
      }));

    it('a book is read back exactly as written: any text, escapes and astral characters included', () =>
      withStores(target, async (a, b) => {
        const fields = { title: ' \u0000\u001f"\\/\u2028 \ud83d\udcda  ', author: 'ÿ\u00ad\ufeff', year: -9999 };
        const { id } = await a.create(fields);
        await caughtUp(b);
        assert.equal(b.getJson(id), JSON.stringify({ id, ...fields }));
      }));
  });
}
