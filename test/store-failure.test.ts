import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { StoreUnavailableError } from '../src/faults.ts';
import { openStore } from '../src/store/open.ts';
import type { DurableBookStore } from '../src/store/book-store.ts';
import { gate, ioError, recordingFs, type RecordingFs } from './helpers/recording-fs.ts';
import { bookIn, booksIn, listJsonOf } from './helpers/store-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const BOOK = { title: 'Emma', author: 'Jane Austen', year: 1815 };
const JOURNAL = 'journal-0000000000000001.jsonl';

describe('store: atomic failure', () => {
  const temp = tempDirs('store-failure-');
  let dir: string;
  let rec: RecordingFs;
  let store: DurableBookStore;
  beforeEach(async () => {
    dir = await temp.make();
    rec = recordingFs();
    store = await openStore(dir, { fs: rec.fs });
    await store.create(BOOK);
  });
  afterEach(async () => {
    await store.close();
    await temp.removeAll();
  });

  it('a failed fdatasync rejects every change waiting at that moment and applies none of them', async () => {
    const held = gate();
    rec.hooks.datasync = async () => {
      rec.hooks = {};
      await held.promise;
      throw ioError('EIO');
    };
    const changes = [store.create(BOOK), store.update(1, { title: 'Changed' }), store.remove(1), store.create(BOOK)];
    const settled = Promise.allSettled(changes);
    held.open();
    const results = await settled;
    assert.deepEqual(
      results.map((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError),
      [true, true, true, true],
    );
    assert.equal(listJsonOf(store), '[{"id":1,"title":"Emma","author":"Jane Austen","year":1815}]');
    assert.equal((await readFile(join(dir, JOURNAL), 'utf8')).split('\n').filter((l) => l.startsWith('{"seq":')).length, 1, 'only the first record remains');
    assert.equal((await store.create(BOOK)).id, 2);
  });

  it('a failed fdatasync is never retried: the failed write is truncated away, not synced again', async () => {
    rec.hooks.datasync = () => {
      rec.hooks = {};
      throw ioError('EIO');
    };
    const events = rec.events.length;
    await assert.rejects(store.create(BOOK), StoreUnavailableError);
    assert.deepEqual(rec.events.slice(events), [`write ${JOURNAL}`, `truncate ${JOURNAL}`, `datasync ${JOURNAL}`]);
  });

  it('stats.datasyncs counts only the fdatasyncs that succeeded', async () => {
    const before = store.stats.datasyncs;
    rec.hooks.datasync = () => {
      rec.hooks = {};
      throw ioError('EIO');
    };
    await assert.rejects(store.create(BOOK), StoreUnavailableError);
    assert.equal(store.stats.datasyncs, before);
    await store.create(BOOK);
    assert.equal(store.stats.datasyncs, before + 1);
  });

  it('when the journal cannot be cut back, writes fail until a restart while reads keep working', async () => {
    rec.hooks.datasync = () => {
      throw ioError('EIO');
    };
    rec.hooks.truncate = () => {
      throw ioError('EROFS');
    };
    await assert.rejects(store.create(BOOK), StoreUnavailableError);
    rec.hooks = {};
    await assert.rejects(store.update(1, { year: 1816 }), StoreUnavailableError);
    await assert.rejects(store.compact(), StoreUnavailableError);
    assert.equal(bookIn(store, 1)?.year, 1815);
    await store.close();
    store = await openStore(dir, { fs: rec.fs });
    // The restart recovers from whatever the disk holds; the unacknowledged record made it there.
    assert.equal((await store.create(BOOK)).id, 3);
  });

  it('a change queued while the failed cut-back runs is refused too, never written after it', async () => {
    const held = gate();
    const reached = gate();
    rec.hooks.datasync = () => {
      delete rec.hooks.datasync;
      throw ioError('EIO');
    };
    rec.hooks.truncate = async () => {
      reached.open();
      await held.promise;
      throw ioError('EROFS');
    };
    const failed = store.create(BOOK);
    await reached.promise;
    const queued = store.create({ ...BOOK, year: 1816 });
    held.open();
    await assert.rejects(failed, StoreUnavailableError);
    await assert.rejects(queued, StoreUnavailableError, 'written behind an unremoved record, it would reuse its sequence number');
    rec.hooks = {};
    await store.close();
    store = await openStore(dir, { fs: rec.fs });
    assert.deepEqual(booksIn(store).map((b) => b.year), [1815, 1815], 'the restart reads the files: the seed and the unacknowledged record');
  });
});
