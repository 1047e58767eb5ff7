import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { StoreUnavailableError } from '../src/faults.ts';
import { createLogger } from '../src/log.ts';
import { openStore } from '../src/store/open.ts';
import { gate, ioError, recordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('store-close-');
const BOOK = { title: 'Emma', author: 'Jane Austen', year: 1815 };
/** Without the fixes these waits never end: the timeout turns a hang into a failure. */
const NO_HANG = { timeout: 10_000 };

/** A logger whose sink fails on every line, as a closed log pipe would. */
const throwingLogger = createLogger({
  level: 'debug',
  write: () => {
    throw new Error('log sink down');
  },
});

describe('store close and failure paths: every promise settles, nothing is left unhandled', () => {
  after(temp.removeAll);

  it('close() called twice: both resolve only once the lock is released, and the directory opens again', async () => {
    const dir = await temp.make();
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs });
    await store.create(BOOK);
    const journalClose = gate();
    rec.hooks.close = () => journalClose.promise;
    const order: string[] = [];
    const first = store.close().then(() => order.push('first'));
    const second = store.close().then(() => order.push('second'));
    // One turn of the event loop: a close that does not wait for the journal has resolved by now.
    await nextTurn();
    order.push('journal closes');
    journalClose.open();
    await Promise.all([first, second]);
    assert.deepEqual(order, ['journal closes', 'first', 'second']);
    const reopened = await openStore(dir);
    assert.equal(reopened.size, 1);
    await reopened.close();
  });

  it('close() releases the lock even when closing the journal fails', async () => {
    const dir = await temp.make();
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs });
    rec.hooks.close = () => {
      throw ioError('EIO');
    };
    await assert.rejects(store.close(), { code: 'EIO' });
    rec.hooks = {};
    await (await openStore(dir)).close();
  });

  it('a logger that throws while a failed write is handled: every waiting change is rejected and writes stop until a restart', NO_HANG, async () => {
    const dir = await temp.make();
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs, logger: throwingLogger });
    rec.hooks.datasync = () => {
      throw ioError('EIO');
    };
    const results = await Promise.allSettled([store.create(BOOK), store.create(BOOK)]);
    assert.deepEqual(
      results.map((r) => r.status === 'rejected' && r.reason instanceof StoreUnavailableError),
      [true, true],
    );
    rec.hooks = {};
    await assert.rejects(store.create(BOOK), StoreUnavailableError);
    await store.close();
    // A restart recovers from whatever the disk holds and takes writes again.
    const reopened = await openStore(dir);
    assert.equal((await reopened.create(BOOK)).title, BOOK.title);
    await reopened.close();
  });

  it('a logger that throws while a failed compaction is handled: compact() rejects with the cause and writes go on', NO_HANG, async () => {
    const dir = await temp.make();
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs, logger: throwingLogger });
    await store.create(BOOK);
    rec.hooks.rename = () => {
      throw ioError('EIO');
    };
    await assert.rejects(store.compact(), { code: 'EIO' });
    rec.hooks = {};
    assert.equal((await store.create(BOOK)).id, 2);
    await store.close();
  });
});
