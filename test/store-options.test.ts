import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { openStore, type CompactionOptions, type FileHandleLike, type FileLayer } from '../src/index.ts';
import { nodeFileLayer } from '../src/fs/durable-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { bookIn } from './helpers/store-books.ts';

const temp = tempDirs('store-options-');

/** What an embedder writes against the library's exported types: a file layer counting fsyncs. */
function countingFileLayer(): { fs: FileLayer; syncs: () => number } {
  let syncs = 0;
  const counted = (h: FileHandleLike): FileHandleLike => ({
    write: (buffer, offset, length) => h.write(buffer, offset, length),
    datasync: async () => {
      await h.datasync();
      syncs++;
    },
    sync: async () => {
      await h.sync();
      syncs++;
    },
    truncate: (length) => h.truncate(length),
    close: () => h.close(),
    stat: () => h.stat(),
    readFile: () => h.readFile(),
  });
  const fs: FileLayer = { ...nodeFileLayer, open: async (path, flags, mode) => counted(await nodeFileLayer.open(path, flags, mode)) };
  return { fs, syncs: () => syncs };
}

describe('StoreOptions: the library exports every type its options expose', () => {
  after(temp.removeAll);

  it('a FileLayer and CompactionOptions written against src/index.ts alone run the store', async () => {
    const dir = await temp.make();
    const layer = countingFileLayer();
    const compaction: Partial<CompactionOptions> = { chunkBooks: 1 };
    const store = await openStore(dir, { fs: layer.fs, compaction });
    await store.create({ title: 'Emma', author: 'Jane Austen', year: 1815 });
    await store.compact();
    await store.close();
    // The LOCK file's fsync; the journal header's fdatasync; the create's; the snapshot's temp file's
    // fsync; the fresh journal's header fdatasync.
    assert.equal(layer.syncs(), 5);
    const reopened = await openStore(dir);
    assert.equal(bookIn(reopened, 1)?.title, 'Emma');
    await reopened.close();
  });
});
