import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openStore } from '../src/store/open.ts';
import { loginToken } from './helpers/login.ts';
import { killAll, runMain, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-recovery-advice-');
after(async () => {
  await killAll();
  await temp.removeAll();
});

const ENV = { SECRET_TOKEN: 'recovery-advice-secret-of-32-bytes-or-more', AUTH_PASSWORD: 'pw' };

describe('a damaged journal: the one line says what the operator can do, and that advice works', () => {
  it('names the truncate command for the file and byte; following it starts with every change before that byte', async () => {
    const dir = await temp.make();
    const store = await openStore(dir);
    for (const title of ['One', 'Two', 'Three']) await store.create({ title, author: 'A', year: 1 });
    await store.close();
    const journal = join(dir, (await readdir(dir)).find((n) => n.startsWith('journal-')) as string);
    const text = await readFile(journal, 'utf8');
    // The byte offset of the second record's line (after the header line and the first record).
    const second = text.indexOf('{"seq":2,');
    await writeFile(journal, text.slice(0, second) + text.slice(second).replace('Two', 'Twx'));

    const cwd = await temp.make();
    const refused = await runMain({ cwd, args: ['--host', '127.0.0.1', '--port', '0', '--data-dir', dir], env: ENV });
    assert.equal(refused.code, 1);
    const lines = refused.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, refused.stderr);
    const command = `truncate -s ${second} ${journal}`;
    assert.ok(lines[0]?.includes(`is damaged at byte ${second}`), lines[0]);
    assert.ok(lines[0]?.includes(`Nothing was changed; restore the data directory from a backup, or keep every change before that byte by cutting the file there (${command})`), lines[0]);

    await new Promise<void>((resolve, reject) => execFile('truncate', ['-s', String(second), journal], (err) => (err === null ? resolve() : reject(err))));
    const service = await startMain({ cwd, args: ['--host', '127.0.0.1', '--port', '0', '--data-dir', dir], env: ENV });
    const token = await loginToken(service.url, 'pw');
    const books = ((await (await fetch(`${service.url}/books`, { headers: { authorization: token } })).json()) as { data: { title: string }[] }).data;
    assert.deepEqual(books.map((b) => b.title), ['One']);
    assert.equal((await service.stop()).code, 0);
  });
});
