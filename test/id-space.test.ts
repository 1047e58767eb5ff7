import assert from 'node:assert/strict';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { BookIdsExhaustedError, InvalidBookError, openStore, writeCatalogue, type Book, type Change } from '../src/index.ts';
import { bookJson } from '../src/model/book.ts';
import { planBatch, NO_ID_LEFT } from '../src/store/batch.ts';
import { encodeDelete, encodePut, journalText } from '../src/store/journal.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { runMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/** 2^53 − 1: the last id a book can have (docs/contract.md, "Books"). */
const LAST_ID = Number.MAX_SAFE_INTEGER;
const book = (id: number, title = `T${id}`): Book => ({ id, title, author: 'A', year: 2000 });
const temp = tempDirs('book-catalogue-id-space-');
after(temp.removeAll);

async function created(app: TestApp, title: string): Promise<{ status: number; message: string; data: unknown }> {
  return (await app.request('POST', '/book', { body: { title, author: 'A', year: 2000 } })).json;
}

describe('book ids stay safe integers (docs/contract.md, "Books" and "Durability")', () => {
  it('after a catalogue whose last id is 2^53 − 2, one create gets 2^53 − 1 and the next is 507 Book ids exhausted, nothing stored; a restart and a compaction keep it so', async () => {
    const dataDir = await temp.make();
    let app = await startApp({ dataDir, catalogue: [book(1), book(LAST_ID - 1)] });
    try {
      const first = await app.request('POST', '/book', { body: { title: 'Last', author: 'A', year: 2000 } });
      assert.deepEqual([first.status, first.json.data], [201, book(LAST_ID, 'Last')]);
      assert.deepEqual((await app.request('GET', `/book/${LAST_ID}`)).json.data, book(LAST_ID, 'Last'));
      for (const title of ['One more', 'And another']) {
        const refused = await app.request('POST', '/book', { body: { title, author: 'A', year: 2000 } });
        assert.equal(refused.status, 507);
        assert.equal(refused.text, '{"status":507,"message":"Book ids exhausted","data":null}');
      }
      assert.deepEqual(((await app.request('GET', '/books')).json.data as Book[]).map((b) => b.id), [1, LAST_ID - 1, LAST_ID]);
      const changes = (await app.request('GET', '/changes?since=0')).json.data as Change[];
      assert.deepEqual(changes.map((c) => [c.seq, c.type, c.id]), [[1, 'created', LAST_ID]]);
      // Updates and deletes still work: only creating needs a new id.
      assert.equal((await app.request('PUT', `/book/${LAST_ID}`, { body: { year: 2001 } })).status, 200);
      assert.equal((await app.request('DELETE', `/book/${LAST_ID}`)).status, 200);
      await app.close({ keepData: true });

      app = await startApp({ dataDir });
      assert.equal((await created(app, 'After a restart')).status, 507, 'the deleted last id is not given again after a restart');
      await app.store.compact();
      await app.close({ keepData: true });
      assert.match(await readFile(join(dataDir, 'snapshot.json'), 'utf8'), /^\{"format":"book-catalogue-snapshot","version":2,"seq":3,"nextId":9007199254740992,/);

      app = await startApp({ dataDir });
      assert.equal((await created(app, 'After a compaction')).status, 507);
      assert.deepEqual(((await app.request('GET', '/books')).json.data as Book[]).map((b) => b.id), [1, LAST_ID - 1]);
    } finally {
      await app.close();
    }
  });

  it('creates in one batch: the first gets 2^53 − 1, the one after it is refused and leaves no record', async () => {
    const dir = await temp.make();
    await writeCatalogue(dir, [book(LAST_ID - 2)]);
    const store = await openStore(dir);
    // The first create is in flight while the next two queue: they form one batch.
    const first = store.create({ title: 'a', author: 'A', year: 1 });
    const second = store.create({ title: 'b', author: 'A', year: 1 });
    const third = store.create({ title: 'c', author: 'A', year: 1 });
    assert.equal((await first).id, LAST_ID - 1);
    assert.equal((await second).id, LAST_ID);
    await assert.rejects(third, BookIdsExhaustedError);
    assert.equal(store.feed.seq, 2);
    await store.close();
    const journal = await readFile(join(dir, 'journal-0000000000000001.jsonl'), 'utf8');
    assert.deepEqual(journal.split('\n').slice(1, -1).map((line) => (JSON.parse(line) as { book: Book }).book.title), ['a', 'b']);
  });

  it('the plan of a batch never numbers a book past 2^53 − 1: the create is refused, the update beside it is written', () => {
    const plan = planBatch(
      [
        { kind: 'create', fields: { title: 'x', author: 'A', year: 1 } },
        { kind: 'update', id: 5, patch: { year: 2 }, condition: undefined },
      ],
      (id) => (id === 5 ? bookJson(book(5)) : undefined),
      LAST_ID + 1,
      7,
    );
    assert.equal(plan.results[0], NO_ID_LEFT);
    assert.equal(journalText(plan.entries), encodePut(8, bookJson({ ...book(5), year: 2 })));
    assert.equal(plan.nextId, LAST_ID + 1);
  });

  for (const [name, record] of [
    ['a put of book 2^53', encodePut(1, bookJson(book(LAST_ID + 1)))],
    ['a delete of book 2^53', encodeDelete(1, LAST_ID + 1)],
    ['a delete of book 0', encodeDelete(1, 0)],
  ] as const) {
    it(`the journal's reader takes ${name}, checksum intact, as damage at its offset`, async () => {
      const dir = await temp.make();
      const file = join(dir, 'journal-0000000000000001.jsonl');
      const header = '{"format":"book-catalogue-journal","version":1}\n';
      await writeFile(file, header + record);
      await assert.rejects(openStore(dir), { name: 'StoreCorruptError', file, offset: header.length });
    });
  }

  it('the journal\'s reader takes a put of book 2^53 − 1: the bound is the writer\'s', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, 'journal-0000000000000001.jsonl'), '{"format":"book-catalogue-journal","version":1}\n');
    await appendFile(join(dir, 'journal-0000000000000001.jsonl'), encodePut(1, bookJson(book(LAST_ID))));
    const store = await openStore(dir);
    assert.equal(store.getJson(LAST_ID), bookJson(book(LAST_ID)));
    await assert.rejects(store.create({ title: 'x', author: 'A', year: 1 }), BookIdsExhaustedError);
    await store.close();
  });

  it('writeCatalogue refuses id 2^53 − 1, saying which id is the largest it takes; nothing is written', async () => {
    const dir = await temp.make();
    await assert.rejects(writeCatalogue(dir, [book(1), book(LAST_ID)]), (err: unknown) => {
      assert.ok(err instanceof InvalidBookError);
      assert.match(err.message, /id 9007199254740991 leaves no id for the next create: the largest id a catalogue may hold is 9007199254740990 \(2\^53 − 2\)/);
      return true;
    });
    assert.deepEqual(await readdir(dir), []);
  });
});

describe('book-catalogue import and the id space', () => {
  const cli = (args: readonly string[]) => runMain({ args, cwd: tmpdir() });

  for (const id of [LAST_ID, LAST_ID + 1, 1e20]) {
    it(`refuses id ${id} with one line naming the largest id it takes, exit 1, nothing written`, async () => {
      const dir = await temp.make();
      const file = join(dir, 'in.json');
      await writeFile(file, `[${bookJson(book(1))},{"id":${id},"title":"T","author":"A","year":1}]`);
      const target = join(dir, 'data');
      const result = await cli(['import', file, '--data-dir', target]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /^book-catalogue: import failed: book at index 1: id \d+ leaves no id for the next create: the largest id a catalogue may hold is 9007199254740990 \(2\^53 − 2\)\n$/);
      assert.deepEqual(await readdir(target).catch(() => []), []);
    });
  }

  it('takes id 2^53 − 2; through HTTP one create gets 2^53 − 1 and the next is 507, across a restart', async () => {
    const dir = await temp.make();
    const file = join(dir, 'in.json');
    await writeFile(file, `[${bookJson(book(7))},${bookJson(book(LAST_ID - 1))}]`);
    const dataDir = join(dir, 'data');
    const imported = await cli(['import', file, '--data-dir', dataDir]);
    assert.equal(imported.code, 0, imported.stderr);
    let app = await startApp({ dataDir });
    try {
      assert.deepEqual(await created(app, 'Last'), { status: 201, message: 'Book created successfully', data: book(LAST_ID, 'Last') });
      assert.deepEqual(await created(app, 'None left'), { status: 507, message: 'Book ids exhausted', data: null });
      await app.close({ keepData: true });
      app = await startApp({ dataDir });
      assert.deepEqual(await created(app, 'Still none'), { status: 507, message: 'Book ids exhausted', data: null });
      assert.deepEqual(((await app.request('GET', '/books')).json.data as Book[]).map((b) => b.id), [7, LAST_ID - 1, LAST_ID]);
    } finally {
      await app.close();
    }
  });
});
