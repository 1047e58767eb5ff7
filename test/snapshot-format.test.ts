import assert from 'node:assert/strict';
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { StoreCorruptError } from '../src/faults.ts';
import { nodeFileLayer } from '../src/fs/durable-fs.ts';
import { openStore } from '../src/store/open.ts';
import { writeSnapshot } from '../src/store/snapshot.ts';
import { booksIn } from './helpers/store-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('snapshot-format-');
after(temp.removeAll);

const CHANGES_MARK = '\n],"changes":[';
const TRAILER_MARK = '\n],"count":';

/** A closed data directory whose snapshot (version 2) carries changes 1–6, types of all three kinds. */
async function compacted(): Promise<{ dir: string; file: string; text: string }> {
  const dir = await temp.make();
  const store = await openStore(dir);
  for (const title of ['Emma', 'Persuasion', 'Sanditon']) await store.create({ title, author: 'Jane Austen', year: 1815 });
  await store.update(1, { year: 1816 });
  await store.remove(2);
  await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 });
  await store.compact();
  await store.close();
  const file = join(dir, 'snapshot.json');
  return { dir, file, text: await readFile(file, 'utf8') };
}

/** `text` with its trailer's CRC made to match again: a snapshot a faulty writer could have made. */
function resealed(text: string): string {
  const at = text.lastIndexOf(TRAILER_MARK);
  const body = text.slice(0, at);
  return `${body}${text.slice(at).replace(/"crc":\d+/, `"crc":${crc32(Buffer.from(body, 'utf8'))}`)}`;
}

/** The byte offset in `text` (ASCII here) where the change line of `seq` starts. */
function changeLineAt(text: string, seq: number): number {
  const at = text.indexOf(`\n{"seq":${seq},`, text.indexOf(CHANGES_MARK));
  assert.ok(at > 0, `change ${seq} is in the snapshot`);
  return at + 1;
}

async function refusedAt(dir: string, detail: RegExp): Promise<number> {
  let offset = -1;
  await assert.rejects(openStore(dir), (err: unknown) => {
    assert.ok(err instanceof StoreCorruptError, String(err));
    assert.match(err.message, detail);
    offset = err.offset;
    return true;
  });
  return offset;
}

describe('the snapshot format: version 2 carries the retained changes, version 1 still reads', () => {
  it('version 2: the books, then the changes up to its seq, one per line, as docs/storage.md shows', async () => {
    const { text } = await compacted();
    assert.equal(
      text.slice(0, text.lastIndexOf(TRAILER_MARK)),
      [
        '{"format":"book-catalogue-snapshot","version":2,"seq":6,"nextId":5,"books":[',
        '{"id":1,"title":"Emma","author":"Jane Austen","year":1816},',
        '{"id":3,"title":"Sanditon","author":"Jane Austen","year":1815},',
        '{"id":4,"title":"Lady Susan","author":"Jane Austen","year":1871}',
        '],"changes":[',
        '{"seq":1,"type":"created","id":1,"book":{"id":1,"title":"Emma","author":"Jane Austen","year":1815}},',
        '{"seq":2,"type":"created","id":2,"book":{"id":2,"title":"Persuasion","author":"Jane Austen","year":1815}},',
        '{"seq":3,"type":"created","id":3,"book":{"id":3,"title":"Sanditon","author":"Jane Austen","year":1815}},',
        '{"seq":4,"type":"updated","id":1,"book":{"id":1,"title":"Emma","author":"Jane Austen","year":1816}},',
        '{"seq":5,"type":"deleted","id":2,"book":null},',
        '{"seq":6,"type":"created","id":4,"book":{"id":4,"title":"Lady Susan","author":"Jane Austen","year":1871}}',
      ].join('\n'),
    );
    assert.match(text.slice(text.lastIndexOf(TRAILER_MARK)), /^\n\],"count":3,"crc":\d+\}\n$/);
  });

  it('a data directory the release before wrote (version-1 snapshot, journal without header) opens, typed changes and all; its first compaction writes version 2', async () => {
    const dir = await temp.make();
    await cp(join(import.meta.dirname, 'fixtures', 'v1-data-dir'), dir, { recursive: true });
    const store = await openStore(dir);
    assert.deepEqual(booksIn(store).map((b) => [b.id, b.title, b.year]), [[1, 'Emma', 1816], [4, 'Sanditon', 1817]]);
    assert.equal(store.feed.seq, 8);
    assert.equal(store.feed.oldest, 5, 'a version-1 snapshot carries no changes: the journal after it is what is retained');
    assert.deepEqual(store.changes(5).map((c) => [c.seq, c.type, c.id]), [[6, 'created', 4], [7, 'updated', 1], [8, 'deleted', 3]]);
    assert.equal((await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 })).id, 5);
    const before = store.changes(5);
    await store.compact();
    await store.close();
    assert.match(await readFile(join(dir, 'snapshot.json'), 'utf8'), /^\{"format":"book-catalogue-snapshot","version":2,"seq":9,"nextId":6,/);
    const reopened = await openStore(dir);
    try {
      assert.deepEqual(reopened.changes(5), before, 'the changes come back from the new snapshot');
    } finally {
      await reopened.close();
    }
  });

  it('a version-1 snapshot holding a book created after its seq (written while writes went on) still types its replayed creation as created', async () => {
    const dir = await temp.make();
    await cp(join(import.meta.dirname, 'fixtures', 'v1-data-dir'), dir, { recursive: true });
    const file = join(dir, 'snapshot.json');
    const text = await readFile(file, 'utf8');
    const persuasion = '{"id":3,"title":"Persuasion","author":"Jane Austen","year":1817}';
    const sanditon = '{"id":4,"title":"Sanditon","author":"Jane Austen","year":1817}';
    await writeFile(file, resealed(text.replace(persuasion, `${persuasion},\n${sanditon}`).replace('"count":2', '"count":3')));
    const store = await openStore(dir);
    try {
      assert.deepEqual(store.changes(5).map((c) => [c.seq, c.type, c.id]), [[6, 'created', 4], [7, 'updated', 1], [8, 'deleted', 3]]);
      assert.equal((await store.create({ title: 'Lady Susan', author: 'Jane Austen', year: 1871 })).id, 5);
    } finally {
      await store.close();
    }
  });

  for (const [what, at] of [
    ['type', '"type":"c'],
    ['book', '"book":{'],
  ] as const) {
    it(`a byte flipped in a change line's ${what} stops startup at that line's offset`, async () => {
      const { dir, file, text } = await compacted();
      const line = changeLineAt(text, 3);
      const bytes = Buffer.from(text, 'utf8');
      const flip = text.indexOf(at, line) + at.length - 1;
      bytes[flip] = (bytes[flip] as number) ^ 0x01;
      await writeFile(file, bytes);
      assert.equal(await refusedAt(dir, /the checksum does not match/), line);
    });
  }

  it('change lines with a gap, checksum matching (a faulty writer), stop startup at the line after the gap', async () => {
    const { dir, file, text } = await compacted();
    const line3 = changeLineAt(text, 3);
    const line4 = changeLineAt(text, 4);
    await writeFile(file, resealed(text.slice(0, line3) + text.slice(line4)));
    assert.equal(await refusedAt(dir, /a change line is not a change in ascending seq order/), line3);
  });

  it('changes that do not end at the snapshot\'s seq, checksum matching, stop startup at the changes', async () => {
    const { dir, file, text } = await compacted();
    const line6 = changeLineAt(text, 6);
    const cut = text.slice(0, line6 - 2) + text.slice(text.lastIndexOf(TRAILER_MARK));
    await writeFile(file, resealed(cut));
    assert.equal(await refusedAt(dir, /ending at the snapshot's/), text.indexOf(CHANGES_MARK) + CHANGES_MARK.length);
  });

  it('a version-2 snapshot without its changes section, checksum matching, stops startup', async () => {
    const { dir, file, text } = await compacted();
    await writeFile(file, resealed(text.slice(0, text.indexOf(CHANGES_MARK)) + text.slice(text.lastIndexOf(TRAILER_MARK))));
    assert.equal(await refusedAt(dir, /the changes are missing/), text.indexOf('\n'));
  });

  it('a snapshot cut short inside its changes stops startup', async () => {
    const { dir, file, text } = await compacted();
    await writeFile(file, text.slice(0, changeLineAt(text, 4) + 10));
    assert.equal(await refusedAt(dir, /the trailer is missing/), text.indexOf('\n'));
  });

  it('writeSnapshot refuses changes that do not end at its seq, and writes nothing', async () => {
    const dir = await temp.make();
    const changes = [{ seq: 4, type: 'deleted', id: 2, bookJson: null }] as const;
    await assert.rejects(writeSnapshot(nodeFileLayer, dir, { seq: 5, nextId: 3 }, [].values(), { changes }), /must be contiguous and end at it/);
    assert.deepEqual(await readdir(dir), []);
  });
});
