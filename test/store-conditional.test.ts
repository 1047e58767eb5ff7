import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { bookEtag, writeCondition } from '../src/books/etag.ts';
import { PreconditionFailedError } from '../src/faults.ts';
import { openStore } from '../src/store/open.ts';
import type { DurableBookStore } from '../src/store/book-store.ts';
import { gate, recordingFs, type RecordingFs } from './helpers/recording-fs.ts';
import { bookIn } from './helpers/store-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const BOOK = { title: 'Emma', author: 'Jane Austen', year: 1815 };
/** The store's condition for an If-Match value, as the book routes build it. */
const ifMatch = (header: string) => writeCondition({ method: 'PUT', headers: { 'if-match': header } } as IncomingMessage);

/** If-Match decided by the store against exactly the state a write replaces (RFC 9110 §13.1.1). */
describe('store: conditional writes (If-Match)', () => {
  const temp = tempDirs('store-conditional-');
  let dir: string;
  let rec: RecordingFs;
  let store: DurableBookStore;
  let tag: string;
  beforeEach(async () => {
    dir = await temp.make();
    rec = recordingFs();
    store = await openStore(dir, { fs: rec.fs });
    await store.create(BOOK);
    await store.create({ ...BOOK, title: 'Persuasion' });
    tag = bookEtag(store.getJson(1) as string);
  });
  afterEach(async () => {
    await store.close();
    await temp.removeAll();
  });

  /** Holds the next fdatasync until the returned function is called. */
  async function holdNextSync(start: () => Promise<unknown>): Promise<() => void> {
    const held = gate();
    const reached = gate();
    rec.hooks.datasync = async () => {
      delete rec.hooks.datasync;
      reached.open();
      await held.promise;
    };
    void start();
    await reached.promise;
    return held.open;
  }

  it('a conditional write queued behind a pending write is checked against that write\'s result', async () => {
    const release = await holdNextSync(() => store.update(1, { year: 1816 }));
    assert.equal(bookIn(store, 1)?.year, 1815, 'the pending write is not visible yet');
    const stale = store.update(1, { title: 'Stale edit' }, ifMatch(tag));
    release();
    await assert.rejects(stale, PreconditionFailedError);
    assert.deepEqual(bookIn(store, 1), { id: 1, ...BOOK, year: 1816 });
  });

  it('of two conditional writes with the same tag in one batch, exactly the first wins', async () => {
    const release = await holdNextSync(() => store.create({ ...BOOK, title: 'Sanditon' }));
    const a = store.update(1, { title: 'A' }, ifMatch(tag));
    const b = store.update(1, { title: 'B' }, ifMatch(tag));
    const c = store.remove(1, ifMatch(tag));
    release();
    assert.equal((await a)?.title, 'A');
    await assert.rejects(b, PreconditionFailedError);
    await assert.rejects(c, PreconditionFailedError);
    assert.equal(bookIn(store, 1)?.title, 'A');
  });

  it('a failed precondition writes nothing, and the current tag or * succeeds', async () => {
    const records = store.stats.records;
    await assert.rejects(store.update(1, { year: 1 }, ifMatch('"not-the-tag"')), PreconditionFailedError);
    await assert.rejects(store.remove(1, ifMatch('W/' + tag)), PreconditionFailedError, 'a weak tag never matches');
    assert.equal(store.stats.records, records);
    assert.equal((await store.update(1, { year: 1817 }, ifMatch(`"x", ${tag}`)))?.year, 1817);
    assert.equal(await store.remove(1, ifMatch('*')), true);
  });

  it('a missing book is not found before any precondition, and other books are not held up', async () => {
    assert.equal(await store.update(99, { year: 1 }, ifMatch(tag)), undefined);
    assert.equal(await store.remove(99, ifMatch('*')), false);
    const release = await holdNextSync(() => store.update(1, { year: 1816 }));
    const other = store.update(2, { year: 1818 }, ifMatch(bookEtag(store.getJson(2) as string)));
    release();
    assert.equal((await other)?.year, 1818);
  });
});
