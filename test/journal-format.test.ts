import assert from 'node:assert/strict';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { StoreCorruptError, StoreFormatError } from '../src/faults.ts';
import { bookJson } from '../src/model/book.ts';
import { encodeDelete, encodePut } from '../src/store/journal.ts';
import { openStore } from '../src/store/open.ts';
import { runMain } from './helpers/process.ts';
import { booksIn } from './helpers/store-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('journal-format-');
after(temp.removeAll);

const HEADER = '{"format":"book-catalogue-journal","version":1}\n';
const JOURNAL_1 = 'journal-0000000000000001.jsonl';
const put = (seq: number, id: number, title: string): string => encodePut(seq, bookJson({ id, title, author: 'A', year: 2000 }));
/** Three records as the release before the header wrote them: no header line. */
const UNMARKED = put(1, 1, 'One') + put(2, 2, 'Two') + encodeDelete(3, 1);

const journalsIn = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((n) => /^journal-\d{16}\.jsonl$/.test(n)).sort();
const titles = (store: Awaited<ReturnType<typeof openStore>>): string[] => booksIn(store).map((b) => b.title);

describe('the journal says which format it is in', () => {
  it('every journal file starts with the header line, before any record: the first one, and each a compaction starts', async () => {
    const dir = await temp.make();
    const store = await openStore(dir);
    await store.create({ title: 'One', author: 'A', year: 2000 });
    const first = await readFile(join(dir, JOURNAL_1), 'utf8');
    assert.equal(first, HEADER + put(1, 1, 'One'));
    await store.compact();
    await store.create({ title: 'Two', author: 'A', year: 2000 });
    await store.close();
    const [next] = await journalsIn(dir);
    assert.equal(next, 'journal-0000000000000002.jsonl');
    assert.equal(await readFile(join(dir, next), 'utf8'), HEADER + put(2, 2, 'Two'));
    const reopened = await openStore(dir);
    await reopened.create({ title: 'Three', author: 'A', year: 2000 });
    await reopened.close();
    assert.equal(await readFile(join(dir, next), 'utf8'), HEADER + put(2, 2, 'Two') + put(3, 3, 'Three'), 'a restart appends to the marked journal, one header');
  });

  it('a journal in the format before the header (records only) opens as it is; new records go to a marked journal', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, JOURNAL_1), UNMARKED);
    const store = await openStore(dir);
    assert.deepEqual(titles(store), ['Two']);
    assert.equal((await store.create({ title: 'Three', author: 'A', year: 2000 })).id, 3);
    await store.close();
    assert.equal(await readFile(join(dir, JOURNAL_1), 'utf8'), UNMARKED, 'the old file is left as it was');
    assert.equal(await readFile(join(dir, 'journal-0000000000000004.jsonl'), 'utf8'), HEADER + put(4, 3, 'Three'));
    const reopened = await openStore(dir);
    assert.deepEqual(titles(reopened), ['Two', 'Three']);
    assert.equal(reopened.feed.seq, 4);
    await reopened.compact();
    await reopened.close();
    assert.deepEqual(await journalsIn(dir), ['journal-0000000000000005.jsonl']);
    const compacted = await openStore(dir);
    assert.deepEqual(titles(compacted), ['Two', 'Three']);
    await compacted.close();
  });

  it('a header naming a later version is refused with StoreFormatError, and nothing is changed', async () => {
    const dir = await temp.make();
    const later = `{"format":"book-catalogue-journal","version":2,"codec":"future"}\n${put(1, 1, 'One')}`;
    await writeFile(join(dir, JOURNAL_1), later);
    await assert.rejects(openStore(dir), (err: unknown) => {
      assert.ok(err instanceof StoreFormatError);
      assert.ok(err instanceof StoreCorruptError, 'a library user catching StoreCorruptError still catches it');
      assert.equal(err.file, join(dir, JOURNAL_1));
      assert.match(err.message, /is in a format this release cannot read \(the journal is in format version 2; this release reads version 1\): it was written by a later release/);
      return true;
    });
    assert.equal(await readFile(join(dir, JOURNAL_1), 'utf8'), later);
    assert.deepEqual((await readdir(dir)).sort(), [JOURNAL_1]);
  });

  it('the service refuses it with one line that says to run a later release, not to cut the file', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, JOURNAL_1), `{"format":"book-catalogue-journal","version":7}\n`);
    const run = await runMain({ cwd: await temp.make(), args: ['--host', '127.0.0.1', '--port', '0', '--data-dir', dir], env: { SECRET_TOKEN: 'journal-format-secret-of-32-bytes-or-more', AUTH_PASSWORD: 'pw' } });
    assert.equal(run.code, 1);
    const lines = run.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, run.stderr);
    assert.match(lines[0] as string, /format version 7.*written by a later release\. Nothing was changed; run the release that wrote it, or a later one/);
    assert.doesNotMatch(lines[0] as string, /truncate/);
  });

  it('a snapshot naming a later version is refused with StoreFormatError too, and nothing is changed', async () => {
    const dir = await temp.make();
    const later = '{"format":"book-catalogue-snapshot","version":9,"books":{"packed":true}}\n';
    await writeFile(join(dir, 'snapshot.json'), later);
    await assert.rejects(openStore(dir), (err: unknown) => err instanceof StoreFormatError && /the snapshot is in format version 9; this release reads versions 1 and 2/.test(err.message));
    assert.equal(await readFile(join(dir, 'snapshot.json'), 'utf8'), later);
  });

  it('a complete first line that starts like a header but is not one is damage at byte 0', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, JOURNAL_1), `{"format":"book-catalogue-journal","version":1,"x":1}\n${put(1, 1, 'One')}`);
    await assert.rejects(openStore(dir), (err: unknown) => err instanceof StoreCorruptError && !(err instanceof StoreFormatError) && err.offset === 0 && /the header does not parse/.test(err.message));
  });

  for (const cut of [1, 20, HEADER.length - 1]) {
    it(`a torn header (${cut} of its ${HEADER.length} bytes, a crash while a journal was being started) is cut like a torn record, and the journal gets a whole one`, async () => {
      const dir = await temp.make();
      const store = await openStore(dir);
      await store.create({ title: 'One', author: 'A', year: 2000 });
      await store.compact();
      await store.close();
      // As a crash leaves the journal a rotation was starting: the header only partly written.
      await writeFile(join(dir, 'journal-0000000000000002.jsonl'), HEADER.slice(0, cut));
      const reopened = await openStore(dir);
      assert.deepEqual(titles(reopened), ['One']);
      await reopened.create({ title: 'Two', author: 'A', year: 2000 });
      await reopened.close();
      assert.equal(await readFile(join(dir, 'journal-0000000000000002.jsonl'), 'utf8'), HEADER + put(2, 2, 'Two'));
      assert.ok((await readdir(dir)).includes(`journal-0000000000000002.jsonl.torn-0`), 'the torn bytes are kept beside it');
      const again = await openStore(dir);
      assert.deepEqual(titles(again), ['One', 'Two']);
      await again.close();
    });
  }

  it('a journal holding only a torn header inside the range another journal holds (a rotation that failed half-way) is removed', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, JOURNAL_1), HEADER + UNMARKED);
    await writeFile(join(dir, 'journal-0000000000000002.jsonl'), HEADER.slice(0, 10));
    const store = await openStore(dir);
    assert.deepEqual(titles(store), ['Two']);
    await store.create({ title: 'Three', author: 'A', year: 2000 });
    await store.close();
    assert.deepEqual(await journalsIn(dir), [JOURNAL_1]);
    assert.equal((await stat(join(dir, JOURNAL_1))).size, Buffer.byteLength(HEADER + UNMARKED + put(4, 3, 'Three')));
  });
});
