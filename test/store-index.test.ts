import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { bookJson } from '../src/model/book.ts';
import { BookIndex } from '../src/store/book-index.ts';
import { writeCatalogue } from '../src/store/catalogue-file.ts';
import { nodeFileLayer } from '../src/fs/durable-fs.ts';
import { loadCatalogue } from '../src/store/recovery.ts';
import { openStore } from '../src/store/open.ts';
import { countTurns } from './helpers/event-loop.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { booksIn, listJsonOf } from './helpers/store-books.ts';

const temp = tempDirs('store-index-');

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;
const heapAfterGc = (): number => {
  collect();
  return process.memoryUsage().heapUsed;
};
const json = (id: number, tag: string): string => bookJson({ id, title: `${tag} é ✓ "q"`, author: 'A', year: id % 3000 });

describe('book index (paged, packed)', () => {
  after(temp.removeAll);

  it('matches a plain sorted map through creates, thousands of updates (repacks), deletes and emptied pages', () => {
    const index = new BookIndex();
    const reference = new Map<number, string>();
    let nextId = 1;
    const sorted = (): string[] => [...reference.entries()].sort(([a], [b]) => a - b).map(([, v]) => v);
    for (let step = 0; step < 30_000; step++) {
      if (step % 2500 === 0) assert.equal(listJsonOf(index), `[${sorted().join(',')}]`, `list at step ${step}`);
      const r = (step * 7919) % 100;
      if (r < 40 || reference.size === 0) {
        const id = nextId++;
        reference.set(id, json(id, `c${step}`));
        index.set(id, json(id, `c${step}`));
      } else {
        const ids = [...reference.keys()];
        const id = ids[(step * 104_729) % ids.length] as number;
        if (r < 85) {
          reference.set(id, json(id, `u${step}`));
          index.set(id, json(id, `u${step}`));
        } else {
          reference.delete(id);
          assert.equal(index.delete(id), true);
          assert.equal(index.delete(id), false);
        }
      }
    }
    const expected = sorted();
    assert.deepEqual(index.all(), expected);
    assert.deepEqual([...index.values()], expected);
    assert.equal(listJsonOf(index), `[${expected.join(',')}]`);
    assert.equal(index.size, reference.size);
    for (const [id, value] of reference) assert.equal(index.get(id), value);
    assert.equal(index.get(nextId), undefined);
  });

  it('a snapshot spanning several pages with non-ASCII text loads every book at its id', async () => {
    const dir = await temp.make();
    const ids = [1, 4095, 4096, 4097, 9000, 20_000, 20_001];
    const books = ids.map((id) => JSON.parse(json(id, `b${id}`)) as { id: number; title: string; author: string; year: number });
    await writeCatalogue(dir, books);
    const store = await openStore(dir);
    assert.deepEqual(booksIn(store), books);
    for (const book of books) assert.equal(store.getJson(book.id), bookJson(book));
    assert.equal(listJsonOf(store), `[${books.map(bookJson).join(',')}]`);
    assert.equal(store.getJson(2), undefined);
    // Each page's UTF-8 length comes from the file's offsets, not from measuring its text.
    assert.equal((await store.listSnapshot()).bytes, Buffer.byteLength(listJsonOf(store)));
    assert.equal((await store.create({ title: 'N', author: 'A', year: 1 })).id, 20_002);
    await store.close();
  });

  it('buildListTexts rebuilds each changed page once, at least one per call, until its deadline, and leaves every book as it was', () => {
    const index = new BookIndex();
    for (let id = 1; id <= 5000; id++) index.set(id, json(id, 'first'));
    assert.equal(index.buildListTexts(Infinity), 0);
    // Ids 10, 2000 and 4000 lie in three different pages; 10 and 11 share one.
    for (const id of [10, 11, 2000, 4000]) index.set(id, json(id, 'second'));
    assert.equal(index.delete(4001), true);
    const expected = index.all();
    // A deadline already passed: one page per call, so a caller can yield between pages.
    assert.equal(index.buildListTexts(0), 2);
    assert.equal(index.buildListTexts(0), 1);
    assert.equal(index.buildListTexts(0), 0);
    assert.equal(index.buildListTexts(0), 0);
    assert.deepEqual(index.all(), expected);
    assert.equal(listJsonOf(index), `[${expected.join(',')}]`);
    assert.equal(index.get(2000), json(2000, 'second'));
    assert.equal(index.get(4001), undefined);
  });

  it('recovery leaves no page holding changes: replay spread over many pages is repacked before the first list', async () => {
    const dir = await temp.make();
    await writeCatalogue(dir, Array.from({ length: 5000 }, (_, i) => ({ id: i + 1, title: `b${i + 1}`, author: 'A', year: 2000 })));
    const store = await openStore(dir);
    for (const id of [10, 2000, 4000]) await store.update(id, { title: `changed ${id}` });
    await store.remove(4001);
    await store.close();
    const loaded = await loadCatalogue(nodeFileLayer, dir);
    assert.equal(loaded.index.buildListTexts(0), 0);
    assert.equal(loaded.index.get(2000), bookJson({ id: 2000, title: 'changed 2000', author: 'A', year: 2000 }));
    assert.equal(loaded.index.get(4001), undefined);
    assert.equal(loaded.index.size, 4999);
  });

  it('listSnapshot rebuilds changed pages a slice per event-loop turn, one rebuild for every caller, and shows the state committed when it ends', async () => {
    const dir = await temp.make();
    await writeCatalogue(dir, Array.from({ length: 5000 }, (_, i) => ({ id: i + 1, title: `b${i + 1}`, author: 'A', year: 2000 })));
    const store = await openStore(dir);
    const realNow = performance.now.bind(performance);
    try {
      await store.listSnapshot();
      // Ids 10, 2000, 3000 and 4000 lie in four pages.
      for (const id of [10, 2000, 3000, 4000]) await store.update(id, { title: `changed ${id}` });
      // A clock that jumps 1 s per reading: every slice's deadline passes after one page.
      let fake = realNow();
      performance.now = () => (fake += 1000);
      const stopCounting = countTurns();
      const first = store.listSnapshot();
      const second = store.listSnapshot();
      const created = store.create({ title: 'During', author: 'A', year: 2001 });
      const [a, b] = await Promise.all([first, second]);
      const turns = stopCounting();
      performance.now = realNow;
      assert.equal(first, second, 'callers meanwhile share one rebuild');
      assert.equal(a, b);
      assert.ok(turns >= 2, `other work ran between slices (${turns} turns)`);
      const text = `[${a.pages.map((page) => page.text).join(',')}]`;
      const { id } = await created;
      // The create committed while the rebuild went on: the snapshot holds all of it or none of it.
      assert.ok(text === listJsonOf(store) || !text.includes(`"id":${id},`), 'one committed state');
      assert.equal(a.bytes, Buffer.byteLength(text));
      assert.ok(text.includes('"title":"changed 3000"'));
    } finally {
      performance.now = realNow;
      await store.close();
    }
  });

  it('a page changed and then listed holds its books once, not its old text and its list text', () => {
    const index = new BookIndex();
    const count = 50_000;
    const long = (id: number, tag: string): string => bookJson({ id, title: `${tag} ${'x'.repeat(400)}`, author: 'A', year: 2000 });
    for (let id = 1; id <= count; id++) index.set(id, long(id, 'first'));
    index.snapshot();
    const before = heapAfterGc();
    // One book in every page changes: each page's list text must be rebuilt.
    for (let id = 1; id <= count; id += 100) index.set(id, long(id, 'second'));
    const snapshot = index.snapshot();
    const grown = heapAfterGc() - before;
    assert.ok(snapshot.bytes > 20_000_000);
    assert.ok(grown < snapshot.bytes / 4, `the heap grew by ${grown} bytes for a ${snapshot.bytes}-byte catalogue`);
  });
});
