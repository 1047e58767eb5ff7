import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../src/index.ts';
import { nodeFileLayer, TEMP_SUFFIX, type FileLayer } from '../src/fs/durable-fs.ts';
import { loginToken } from './helpers/login.ts';
import { startMain, type RunningService } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-modes-');
after(() => temp.removeAll());

/*
 * The data directory holds the catalogue, the generated signing secret and password: nobody but
 * the service's user may read it. The process runs with umask 0, so modes are the service's own.
 */
const UMASK_ZERO = new URL('./fixtures/umask-zero.mjs', import.meta.url).pathname;

/** Every entry below `dir` (itself included) as [relative path, mode & 0o777, is directory]. */
async function modes(dir: string): Promise<[string, string, boolean][]> {
  const out: [string, string, boolean][] = [['.', ((await stat(dir)).mode & 0o777).toString(8), true]];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    out.push([path.slice(dir.length + 1), ((await stat(path)).mode & 0o777).toString(8), entry.isDirectory()]);
  }
  return out;
}

function assertPrivate(entries: [string, string, boolean][]): void {
  const wrong = entries.filter(([, mode, isDir]) => mode !== (isDir ? '700' : '600'));
  assert.deepEqual(wrong, [], 'directories 0700, files 0600');
}

describe('file modes: the data directory is 0700 and every file in it 0600', () => {
  let root: string;
  let dataDir: string;
  let main: RunningService | undefined;
  let whileRunning: [string, string, boolean][];
  let afterStop: [string, string, boolean][];

  before(async () => {
    root = await temp.make();
    dataDir = join(root, 'data');
    main = await startMain({ args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], cwd: root, env: { NODE_OPTIONS: `--import ${UMASK_ZERO}` } });
    const password = (await readFile(join(dataDir, 'auth-password'), 'utf8')).trim();
    const base = main.url;
    const send = async (method: string, path: string, body: unknown, authorization: string): Promise<{ data: unknown }> => {
      const res = await fetch(base + path, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json', authorization } });
      return (await res.json()) as { data: unknown };
    };
    const token = await loginToken(base, password);
    for (let i = 1; i <= 30; i++) await send('POST', '/book', { title: `Book ${i}`, author: 'Modes', year: 2000 + i }, token);
    for (let i = 1; i <= 30; i += 3) await send('PUT', `/book/${i}`, { year: 1999 }, token);
    for (let i = 2; i <= 30; i += 3) await send('DELETE', `/book/${i}`, undefined, token);
    whileRunning = await modes(dataDir);
    assert.equal((await main.stop()).code, 0);
    afterStop = await modes(dataDir);
  });
  after(async () => {
    await main?.stop();
  });

  it('while serving: the directory, the journal, the lock and the generated secret and password', () => {
    const names = whileRunning.map(([name]) => name);
    for (const expected of ['.', 'LOCK', 'secret-token', 'auth-password']) assert.ok(names.includes(expected), `${expected} in ${names.join(', ')}`);
    assert.ok(names.length >= 5, `a storage file beside them: ${names.join(', ')}`);
    assertPrivate(whileRunning);
  });

  it('after a clean shutdown', () => {
    assertPrivate(afterStop);
  });
});

describe('file modes through compaction: snapshot and temp files are 0600 from the moment they exist', () => {
  let dir: string;
  const opened: [string, string, boolean][] = [];
  let afterClose: [string, string, boolean][];

  before(async () => {
    dir = join(await temp.make(), 'data');
    // The mode a file has right after open() is what a reader could race for: record it then.
    const fs: FileLayer = {
      ...nodeFileLayer,
      async open(path, flags, mode) {
        const handle = await nodeFileLayer.open(path, flags, mode);
        opened.push([path.slice(dir.length + 1), ((await stat(path)).mode & 0o777).toString(8), false]);
        return handle;
      },
    };
    const umask = process.umask(0);
    try {
      const store = await openStore(dir, { fs, compaction: { minBytes: 1, ratio: 0.5 } });
      for (let i = 1; i <= 60; i++) await store.create({ title: `Book ${i}`, author: 'Compact', year: i });
      for (let i = 1; i <= 60; i += 2) await store.update(i, { year: -i });
      for (let i = 2; i <= 60; i += 4) await store.remove(i);
      await store.close();
    } finally {
      process.umask(umask);
    }
    afterClose = await modes(dir);
  });

  it('every file the store opened was 0600 at once, the snapshot temp file included', () => {
    assert.ok(opened.some(([name]) => name.endsWith(TEMP_SUFFIX)), `a compaction ran: ${opened.map(([n]) => n).join(', ')}`);
    assertPrivate(opened);
  });

  it('the directory and every file left after close', () => {
    assertPrivate(afterClose);
  });
});
