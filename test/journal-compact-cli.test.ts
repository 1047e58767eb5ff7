import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loginToken } from './helpers/login.ts';
import { killAll, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ENV = { SECRET_TOKEN: 'journal-compact-cli-secret-32-bytes-long', AUTH_PASSWORD: 'journal-compact-password' };

/** Starts `node dist/main.js` with `env`, creates `books` books, stops it, and lists its data directory. */
async function filesAfterCreates(cwd: string, env: Record<string, string>, books: number): Promise<string[]> {
  const service = await startMain({ cwd, args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', 'data'], env: { ...ENV, ...env } });
  try {
    const token = await loginToken(service.url, ENV.AUTH_PASSWORD);
    for (let i = 0; i < books; i++) {
      const res = await fetch(`${service.url}/book`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ title: `Book ${i} ${'x'.repeat(200)}`, author: 'A. Author', year: 2000 }),
      });
      assert.equal(res.status, 201);
    }
  } finally {
    const exit = await service.stop();
    assert.equal(exit.code, 0, exit.stderr);
  }
  return readdir(join(cwd, 'data'));
}

describe('JOURNAL_COMPACT_KB', () => {
  const dirs = tempDirs('book-catalogue-journal-compact-');
  after(async () => {
    await killAll();
    await dirs.removeAll();
  });

  it('is the journal size past which the service compacts: 1 KiB compacts within a few creates, the default (4 MiB) does not', async () => {
    assert.ok((await filesAfterCreates(await dirs.make(), { JOURNAL_COMPACT_KB: '1' }, 20)).includes('snapshot.json'));
    assert.ok(!(await filesAfterCreates(await dirs.make(), {}, 20)).includes('snapshot.json'));
  });
});
