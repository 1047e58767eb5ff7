import assert from 'node:assert/strict';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Book } from '../src/model/book.ts';
import { readCatalogue, writeCatalogue } from '../src/store/catalogue-file.ts';
import { openStore } from '../src/store/open.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { booksIn, listJsonOf } from './helpers/store-books.ts';

const temp = tempDirs('store-catalogue-');
const tempDir = temp.make;

const BOOKS: Book[] = [
  { id: 7, title: 'Middlemarch', author: 'George Eliot', year: 1871 },
  { id: 3, title: 'Silas "Weaver"\n', author: 'Éliot', year: -1861 },
];

async function contents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir)) out[name] = await readFile(join(dir, name), 'utf8');
  return out;
}

describe('catalogue files for backup and restore', () => {
  after(temp.removeAll);

  it('writeCatalogue initialises an empty directory: ids kept, the next id after the largest', async () => {
    const dir = await tempDir();
    await writeCatalogue(dir, BOOKS);
    const store = await openStore(dir);
    assert.deepEqual(booksIn(store), [BOOKS[1], BOOKS[0]]);
    assert.equal((await store.create({ title: 'Adam Bede', author: 'George Eliot', year: 1859 })).id, 8);
    await store.close();
  });

  it('writeCatalogue refuses a directory that already holds a catalogue', async () => {
    const dir = await tempDir();
    await (await openStore(dir)).close();
    await assert.rejects(writeCatalogue(dir, BOOKS), /already holds a catalogue/);
  });

  const invalid: { name: string; books: unknown[] }[] = [
    { name: 'a duplicate id', books: [BOOKS[0], { ...BOOKS[1], id: 7 }] },
    { name: 'an id of 0', books: [{ ...BOOKS[0], id: 0 }] },
    { name: 'a missing title', books: [{ id: 1, author: 'A', year: 1 }] },
    { name: 'a fractional year', books: [{ id: 1, title: 'T', author: 'A', year: 1.5 }] },
  ];
  for (const { name, books } of invalid) {
    it(`writeCatalogue rejects ${name} and writes nothing`, async () => {
      const dir = await tempDir();
      await assert.rejects(writeCatalogue(dir, books as Book[]), TypeError);
      assert.deepEqual(await readdir(dir).catch(() => []), []);
    });
  }

  it('readCatalogue reads a live directory without its lock, changes no file and leaves out a torn tail', async () => {
    const dir = await tempDir();
    await writeCatalogue(dir, BOOKS);
    const store = await openStore(dir);
    await store.update(3, { title: 'Silas Marner' });
    await store.remove(7);
    await appendFile(join(dir, 'journal-0000000000000001.jsonl'), '{"seq":3,"op":"del","id":3');
    const before = await contents(dir);
    assert.deepEqual(await readCatalogue(dir), { books: [{ ...BOOKS[1], title: 'Silas Marner' }], nextId: 8 });
    assert.deepEqual(await contents(dir), before);
    await store.close();
  });

  it('readCatalogue sees a state the store acknowledged while compactions swap files under it', async () => {
    const dir = await tempDir();
    const store = await openStore(dir, { compaction: { minBytes: 600, chunkBooks: 2 } });
    const states = new Set<string>(['[]']);
    const reads: Promise<{ books: Book[] }>[] = [];
    // At least 150 writes, and on until four compactions have finished: a loaded machine finishes
    // fewer of them while the same writes go by (bounded, so a store that never compacts fails below).
    for (let i = 0; i < 150 || (store.stats.compactions <= 3 && i < 3000); i++) {
      if (i % 3 === 2) await store.remove(i - 1);
      else await store.create({ title: `T${i}`, author: 'A', year: i });
      states.add(listJsonOf(store));
      if (i % 5 === 0) reads.push(readCatalogue(dir));
    }
    assert.ok(store.stats.compactions > 3, `compactions finished: ${store.stats.compactions}`);
    const ids = (books: readonly Book[]): string => books.map((b) => b.id).join(',');
    for (const read of await Promise.all(reads)) {
      assert.ok(states.has(JSON.stringify(read.books)), `read ids ${ids(read.books)}: no state the store acknowledged (the last: ${ids(JSON.parse(listJsonOf(store)) as Book[])})`);
    }
    await store.close();
  });

  it('readCatalogue of a directory never written is empty', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'unrelated'), 'x');
    assert.deepEqual(await readCatalogue(dir), { books: [], nextId: 1 });
  });
});
