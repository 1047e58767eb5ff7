import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLogger } from '../src/log.ts';
import { openStore, readCatalogue, type Book, type Change } from '../src/index.ts';
import { bookJson } from '../src/model/book.ts';
import { encodeDelete, encodePut, JOURNAL_HEADER } from '../src/store/journal.ts';
import { startApp } from './helpers/app.ts';
import { booksIn } from './helpers/store-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const JOURNAL = 'journal-0000000000000001.jsonl';
const temp = tempDirs('journal-last-record-');
after(temp.removeAll);

/**
 * A closed data directory whose journal holds three creates and the delete of book 3 (seq 4): the
 * last record is the delete, so dropping it would bring book 3 back.
 */
async function seeded(): Promise<{ dir: string; file: string; bytes: Buffer }> {
  const dir = await temp.make();
  const store = await openStore(dir);
  for (const title of ['Emma', 'Persuasion', 'Sanditon']) await store.create({ title, author: 'Jane Austen', year: 1815 });
  await store.remove(3);
  await store.close();
  const file = join(dir, JOURNAL);
  return { dir, file, bytes: await readFile(file) };
}

function openLogged(dir: string): { logs: () => { level: number; msg: string; offset?: number; damagedByte?: number }[]; open: () => ReturnType<typeof openStore> } {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => lines.push(line) });
  return { logs: () => lines.map((l) => JSON.parse(l) as { level: number; msg: string }), open: () => openStore(dir, { logger }) };
}

describe('the journal\'s last record: a whole one is kept whatever became of its newline', () => {
  const damaged = [
    { name: 'its newline missing', end: (bytes: Buffer) => bytes.subarray(0, -1), byte: undefined },
    ...Array.from({ length: 8 }, (_, bit) => ({
      name: `bit ${bit} of its newline flipped (0x0a → 0x${(10 ^ (1 << bit)).toString(16).padStart(2, '0')})`,
      end: (bytes: Buffer) => Buffer.concat([bytes.subarray(0, -1), Buffer.of(10 ^ (1 << bit))]),
      byte: 10 ^ (1 << bit),
    })),
  ];
  for (const { name, end, byte } of damaged) {
    it(`with ${name}: the record is kept, logged at error, its newline written back; its seq is not given again`, async () => {
      const { dir, file, bytes } = await seeded();
      await writeFile(file, end(bytes));
      // A backup reads without repairing: the record is there too.
      assert.deepEqual((await readCatalogue(dir)).books.map((b) => b.id), [1, 2]);
      const { logs, open } = openLogged(dir);
      const store = await open();
      assert.deepEqual(booksIn(store).map((b) => b.id), [1, 2], 'the delete of book 3, the last record, still holds');
      assert.equal(store.feed.seq, 4);
      assert.deepEqual(await readFile(file), bytes, 'the file is as it was written, newline and all');
      assert.deepEqual((await readdir(dir)).sort(), ['LOCK', JOURNAL], 'nothing was set aside');
      const line = logs().find((l) => l.msg.includes('lacks its newline'));
      assert.deepEqual([line?.level, line?.offset, line?.damagedByte], [50, bytes.length - 1, byte]);
      assert.equal((await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 })).id, 4);
      assert.deepEqual(store.changes(4).map((c) => [c.seq, c.type, c.id]), [[5, 'created', 4]]);
      await store.close();
      const reopened = await openStore(dir);
      assert.deepEqual(booksIn(reopened).map((b) => b.id), [1, 2, 4]);
      await reopened.close();
    });
  }

  it('through HTTP: the final newline flipped to \\v, book 3 is served after the restart and a follower at seq 3 sees the next change as seq 4', async () => {
    const dataDir = await temp.make();
    let app = await startApp({ dataDir });
    try {
      for (const title of ['Emma', 'Persuasion', 'Sanditon']) await app.request('POST', '/book', { body: { title, author: 'Jane Austen', year: 1815 } });
      await app.close({ keepData: true });
      const file = join(dataDir, JOURNAL);
      const bytes = await readFile(file);
      bytes[bytes.length - 1] = 0x0b;
      await writeFile(file, bytes);
      app = await startApp({ dataDir });
      assert.equal((await app.request('GET', '/book/3')).status, 200);
      const caughtUp = await app.request('GET', '/changes?since=3');
      assert.deepEqual([caughtUp.status, caughtUp.json.data, caughtUp.headers.get('x-last-seq')], [200, [], '3']);
      assert.equal(((await app.request('POST', '/book', { body: { title: 'Lady Susan', author: 'Jane Austen', year: 1871 } })).json.data as Book).id, 4);
      const next = (await app.request('GET', '/changes?since=3')).json.data as Change[];
      assert.deepEqual(next.map((c) => [c.seq, c.type, c.id]), [[4, 'created', 4]]);
    } finally {
      await app.close();
    }
  });

  it('a last record that lost more than its newline is torn: set aside beside the journal, the next change numbered after the last record kept', async () => {
    const { dir, file, bytes } = await seeded();
    await writeFile(file, bytes.subarray(0, -2));
    const store = await openStore(dir);
    const lastKept = bytes.lastIndexOf(10, bytes.length - 2) + 1;
    assert.ok((await readdir(dir)).includes(`${JOURNAL}.torn-${lastKept}`));
    assert.equal(store.feed.seq, 3);
    assert.deepEqual(booksIn(store).map((b) => b.id), [1, 2, 3]);
    await store.close();
  });

  it('a whole record without its newline before the last journal ends is damage, named with its offset', async () => {
    const dir = await temp.make();
    const put = (seq: number, id: number): string => encodePut(seq, bookJson({ id, title: `T${id}`, author: 'A', year: 2000 }));
    const first = `${JOURNAL_HEADER.toString('latin1')}${put(1, 1)}${put(2, 2)}`.slice(0, -1);
    await writeFile(join(dir, JOURNAL), first);
    await writeFile(join(dir, 'journal-0000000000000003.jsonl'), `${JOURNAL_HEADER.toString('latin1')}${encodeDelete(3, 1)}`);
    await assert.rejects(openStore(dir), { name: 'StoreCorruptError', file: join(dir, JOURNAL), offset: first.length });
  });
});
