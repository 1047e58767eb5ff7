import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readCatalogue } from '../src/store/catalogue-file.ts';
import { exerciseEmbeddingExample } from './helpers/embedding.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

describe('embedding the library (docs/embedding.md)', () => {
  const temp = tempDirs('book-catalogue-embed-');
  after(() => temp.removeAll());

  it('the example of docs/embedding.md mounts createApp in its own node:http server, serves requests and stops on SIGTERM', async () => {
    const dataDir = await temp.make();
    // The package refers to itself by name (its `exports`), so `from 'book-catalogue'` is dist/.
    const stdout = await exerciseEmbeddingExample(process.execPath, ['docs/embedding-example.mjs'], ROOT, dataDir);
    assert.match(stdout, /^catalogue at http:\/\/127\.0\.0\.1:\d+\/catalogue\n$/, 'the library itself wrote nothing to stdout');
    const { books } = await readCatalogue(dataDir);
    const written = [
      { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 },
      { id: 2, title: 'Emma', author: 'Jane Austen', year: 1815 },
    ];
    assert.deepEqual(books, written, 'close() left every acknowledged write on disk');
  });

  it('importing and using the library reads no environment, adds no signal or exit handler, writes nothing and never exits', async () => {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['test/fixtures/library-side-effects.mjs'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' } }, (err, out) =>
        err === null ? resolve(out) : reject(err),
      );
    });
    assert.deepEqual(JSON.parse(stdout), { status: 200, envReads: [], listenersAdded: [], writes: 0, exitCalls: 0 });
  });
});
