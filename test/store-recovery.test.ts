import assert from 'node:assert/strict';
import { appendFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { createLogger } from '../src/log.ts';
import { StoreCorruptError } from '../src/faults.ts';
import { openStore } from '../src/store/open.ts';
import { nodeFileLayer } from '../src/fs/durable-fs.ts';
import { writeSnapshot } from '../src/store/snapshot.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { bookIn, booksIn } from './helpers/store-books.ts';

const JOURNAL = 'journal-0000000000000001.jsonl';
const temp = tempDirs('store-recovery-');

/** A closed data directory holding three books written one by one (three journal records). */
async function seeded(): Promise<string> {
  const dir = await temp.make();
  const store = await openStore(dir);
  for (const title of ['Emma', 'Persuasion', 'Sanditon']) await store.create({ title, author: 'Jane Austen', year: 1815 });
  await store.remove(3);
  await store.close();
  return dir;
}

async function flipByte(file: string, offset: number): Promise<void> {
  const bytes = await readFile(file);
  bytes[offset] = (bytes[offset] as number) ^ 0x01;
  await writeFile(file, bytes);
}

function openLogged(dir: string): { logs: string[]; open: () => ReturnType<typeof openStore> } {
  const logs: string[] = [];
  const logger = createLogger({ level: 'debug', write: (line) => logs.push(line) });
  return { logs, open: () => openStore(dir, { logger }) };
}

describe('store recovery', () => {
  after(temp.removeAll);

  it('restarts with every change: contents, deletes, and ids never reused', async () => {
    const dir = await seeded();
    const store = await openStore(dir);
    assert.deepEqual(booksIn(store).map((b) => b.title), ['Emma', 'Persuasion']);
    assert.equal((await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 })).id, 4);
    await store.close();
  });

  const torn = [
    { name: 'a final record cut off before its newline', tail: '{"seq":5,"op":"put","book":{"id":4,"ti', ids: [4] },
    { name: 'zeros a power loss left where a final record was being appended', tail: '\0'.repeat(300), ids: [] },
  ];
  for (const { name, tail, ids } of torn) {
    it(`${name} is cut away, kept beside the journal, and logged at error level`, async () => {
      const dir = await seeded();
      const file = join(dir, JOURNAL);
      const { size } = await stat(file);
      await appendFile(file, tail);
      const { logs, open } = openLogged(dir);
      const store = await open();
      assert.equal((await stat(file)).size, size);
      assert.equal(await readFile(`${file}.torn-${size}`, 'latin1'), tail);
      const line = logs.map((l) => JSON.parse(l) as { level: number; msg: string; offset?: number; ids?: number[] }).find((l) => l.msg.includes('torn final journal record'));
      assert.deepEqual({ level: line?.level, offset: line?.offset, ids: line?.ids }, { level: 50, offset: size, ids });
      assert.deepEqual(booksIn(store).map((b) => b.id), [1, 2]);
      // Book 4 was only ever in the torn record, never acknowledged: its id is still not reused.
      assert.equal((await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 })).id, ids.length > 0 ? 5 : 4);
      await store.close();
    });
  }

  it('a complete final record whose checksum fails (a flipped byte) stops startup naming the journal and offset, and nothing is cut', async () => {
    const dir = await seeded();
    const file = join(dir, JOURNAL);
    const { size } = await stat(file);
    await appendFile(file, '{"seq":5,"op":"del","id":1,"crc":12345}\n');
    await assert.rejects(openStore(dir), { name: 'StoreCorruptError', file, offset: size });
    assert.equal((await stat(file)).size, size + '{"seq":5,"op":"del","id":1,"crc":12345}\n'.length);
  });

  it('a flipped byte in the last complete record of a live journal stops startup instead of dropping that write', async () => {
    const dir = await seeded();
    const file = join(dir, JOURNAL);
    const text = await readFile(file, 'utf8');
    const last = text.lastIndexOf('\n', text.length - 2) + 1;
    await flipByte(file, last + 12);
    await assert.rejects(openStore(dir), { name: 'StoreCorruptError', file, offset: last });
  });

  it('a flipped byte in a record before the last stops startup naming the journal and the byte offset', async () => {
    const dir = await seeded();
    const file = join(dir, JOURNAL);
    const lines = (await readFile(file, 'utf8')).split('\n');
    const second = Buffer.byteLength(`${lines[0]}\n`);
    await flipByte(file, second + 30);
    await assert.rejects(openStore(dir), (err: unknown) => {
      assert.ok(err instanceof StoreCorruptError);
      assert.equal(err.file, file);
      assert.equal(err.offset, second);
      assert.match(err.message, new RegExp(`${JOURNAL} is damaged at byte ${second}`));
      return true;
    });
  });

  it('a flipped byte in the snapshot stops startup naming the snapshot and the damaged line', async () => {
    const dir = await seeded();
    const store = await openStore(dir);
    await store.compact();
    await store.close();
    const file = join(dir, 'snapshot.json');
    const text = await readFile(file, 'utf8');
    const line = text.indexOf('{"id":2');
    await flipByte(file, line + 12);
    await assert.rejects(openStore(dir), { name: 'StoreCorruptError', file, offset: line });
  });

  // Number() would read each of these as 1; the snapshot's writer only ever writes plain digits.
  for (const id of ['1e0', '+1', ' 1', '0x1', '1.0']) {
    it(`a snapshot book line whose id is ${JSON.stringify(id)} (checksum intact) stops startup with StoreCorruptError at that line`, async () => {
      const dir = await temp.make();
      const head = '{"format":"book-catalogue-snapshot","version":1,"seq":0,"nextId":2,"books":[\n';
      const body = `${head}{"id":${id},"title":"Emma","author":"Jane Austen","year":1815}`;
      const file = join(dir, 'snapshot.json');
      await writeFile(file, `${body}\n],"count":1,"crc":${crc32(body)}}\n`);
      await assert.rejects(openStore(dir), { name: 'StoreCorruptError', file, offset: head.length });
    });
  }

  it('a missing journal stops startup instead of silently dropping its changes', async () => {
    const dir = await seeded();
    const store = await openStore(dir);
    await store.compact();
    await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 });
    await store.compact();
    await store.close();
    await rm(join(dir, 'snapshot.json'));
    await assert.rejects(openStore(dir), { name: 'StoreCorruptError', offset: 0 });
  });

  it('temp files and journals a compaction left behind are removed on start', async () => {
    const dir = await seeded();
    const compacted = await readFile(join(dir, JOURNAL));
    const store = await openStore(dir);
    await store.compact();
    await store.close();
    // As a crash leaves them: after the snapshot's rename, before the old journal's unlink.
    await writeFile(join(dir, 'snapshot.json.tmp'), '{"format":');
    await writeFile(join(dir, JOURNAL), compacted);
    const reopened = await openStore(dir);
    assert.deepEqual((await readdir(dir)).sort(), ['LOCK', 'journal-0000000000000005.jsonl', 'snapshot.json']);
    assert.deepEqual(booksIn(reopened).map((b) => b.id), [1, 2]);
    await reopened.close();
  });

  it('an empty journal a half-finished rotation left beside the one holding its records is skipped, not fatal', async () => {
    const dir = await seeded();
    // Records 1–4 are in journal 1; an empty journal numbered inside that range holds nothing.
    await writeFile(join(dir, 'journal-0000000000000003.jsonl'), '');
    const store = await openStore(dir);
    assert.deepEqual(booksIn(store).map((b) => b.id), [1, 2]);
    await store.close();
  });

  it('a delete and an update of the same book in one batch: the update finds no book, and none comes back', async () => {
    const dir = await seeded();
    const store = await openStore(dir);
    // The first write is in flight while the next two queue: they form one batch.
    const first = store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 });
    const removed = store.remove(1);
    const updated = store.update(1, { year: 1816 });
    await first;
    assert.equal(await removed, true);
    assert.equal(await updated, undefined);
    assert.equal(bookIn(store, 1), undefined);
    await store.close();
    const reopened = await openStore(dir);
    assert.equal(bookIn(reopened, 1), undefined);
    await reopened.close();
  });

  it('a snapshot whose header names a next id at or below its last book still never reuses an id', async () => {
    const dir = await temp.make();
    const book = (id: number): string => `{"id":${id},"title":"T${id}","author":"A","year":2000}`;
    await writeSnapshot(nodeFileLayer, dir, { seq: 0, nextId: 3 }, [book(2), book(7)].values());
    const store = await openStore(dir);
    assert.equal((await store.create({ title: 'Next', author: 'A', year: 2001 })).id, 8);
    await store.close();
  });
});
