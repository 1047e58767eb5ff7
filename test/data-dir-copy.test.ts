import assert from 'node:assert/strict';
import { cp, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLogger } from '../src/log.ts';
import { openStore } from '../src/store/open.ts';
import { loginToken } from './helpers/login.ts';
import { killAll, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-copy-');
after(async () => {
  await killAll();
  await temp.removeAll();
});

const LOCAL = ['--host', '127.0.0.1', '--port', '0'];

describe('a file-level copy of a live data directory starts (its copied LOCK names another directory)', () => {
  it('the lock records the pid and the directory it was made in', async () => {
    const dir = await temp.make();
    const store = await openStore(dir);
    const info = await stat(dir, { bigint: true });
    assert.equal(await readFile(join(dir, 'LOCK'), 'utf8'), `${process.pid}\ndir ${info.dev}:${info.ino}\n`);
    await store.close();
  });

  it('a lock naming another directory is replaced with a warning, even though its pid is alive', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, 'LOCK'), `${process.ppid}\ndir 1:2\n`);
    const logs: string[] = [];
    const store = await openStore(dir, { logger: createLogger({ level: 'warn', write: (l) => logs.push(l) }) });
    assert.equal(logs.length, 1);
    assert.match(logs[0] as string, /"level":40.*replacing a LOCK copied from another directory/);
    await store.close();
  });

  it('a lock naming this directory with a live pid still refuses the directory', async () => {
    const dir = await temp.make();
    const info = await stat(dir, { bigint: true });
    await writeFile(join(dir, 'LOCK'), `${process.ppid}\ndir ${info.dev}:${info.ino}\n`);
    await assert.rejects(openStore(dir), { name: 'DataDirLockedError', pid: process.ppid });
  });

  it('cp -r of a running service\'s directory starts beside it with the books, the password and the tokens', async () => {
    const env = { HOME: process.env.HOME ?? '/' };
    const original = join(await temp.make(), 'data');
    const live = await startMain({ cwd: await temp.make(), args: [...LOCAL, '--data-dir', original], env });
    const password = (await readFile(join(original, 'auth-password'), 'utf8')).trim();
    const token = await loginToken(live.url, password);
    const created = await fetch(`${live.url}/book`, { method: 'POST', headers: { authorization: token }, body: JSON.stringify({ title: 'T', author: 'A', year: 1 }) });
    assert.equal(created.status, 201);

    const copy = join(await temp.make(), 'copy');
    await cp(original, copy, { recursive: true });
    const second = await startMain({ cwd: await temp.make(), args: [...LOCAL, '--data-dir', copy], env });
    const books = await fetch(`${second.url}/books`, { headers: { authorization: token } });
    assert.equal(books.status, 200, 'a token of the original works: secret-token came along');
    assert.deepEqual(((await books.json()) as { data: unknown }).data, [{ id: 1, title: 'T', author: 'A', year: 1 }]);
    assert.match(second.output().stdout, /replacing a LOCK copied from another directory/);
    assert.equal((await second.stop()).code, 0);
    assert.equal((await live.stop()).code, 0, 'the original kept running');
  });
});
