import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function ignored(path: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    execFile('git', ['check-ignore', '--no-index', '--quiet', path], { cwd: ROOT }, (err) => {
      if (err === null) return resolve(true);
      if ((err as { code?: unknown }).code === 1) return resolve(false);
      reject(err);
    });
  });
}

describe('.gitignore keeps generated credentials out of commits', () => {
  const inGit = existsSync(join(ROOT, '.git'));
  it('secret-token and auth-password (and their temp files) are ignored in any directory, `--data-dir .` included', { skip: inGit ? false : 'not a git checkout' }, async () => {
    for (const dir of ['', 'data/', 'other-data/', 'deep/er/']) {
      for (const name of ['secret-token', 'auth-password', 'secret-token.tmp', 'auth-password.tmp']) {
        assert.ok(await ignored(`${dir}${name}`), `${dir}${name} is ignored`);
      }
    }
    assert.equal(await ignored('src/auth/secrets.ts'), false, 'sources are not');
  });
});
