import assert from 'node:assert/strict';
import { chmod, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadOrCreateSecret, PASSWORD_FILE } from '../src/auth/secrets.ts';
import { recordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('store-secrets-');

describe('generated secrets are written atomically and durably, mode 0600', () => {
  after(temp.removeAll);

  it('a generated password goes to a temp file, is fsynced, renamed into place, and the directory fsynced', async () => {
    const dir = await temp.make();
    const rec = recordingFs();
    const stored = await loadOrCreateSecret(dir, PASSWORD_FILE, 18, rec.fs);
    assert.equal(stored.created, true);
    const tmp = `${PASSWORD_FILE}.tmp`;
    assert.deepEqual(rec.events, [`open(wx) ${tmp}`, `write ${tmp}`, `sync ${tmp}`, `close ${tmp}`, `rename ${PASSWORD_FILE}`, `syncDir ${basename(dir)}`]);
  });

  it('the file is 0600, holds the value, no temp file remains, and the next start reads the same value', async () => {
    const dir = await temp.make();
    const first = await loadOrCreateSecret(dir, PASSWORD_FILE, 18);
    assert.equal((await stat(first.path)).mode & 0o777, 0o600);
    assert.equal(await readFile(join(dir, PASSWORD_FILE), 'utf8'), `${first.value}\n`);
    assert.deepEqual(await readdir(dir), [PASSWORD_FILE]);
    const again = await loadOrCreateSecret(dir, PASSWORD_FILE, 18);
    assert.deepEqual(again, { value: first.value, created: false, path: first.path });
  });
});

describe('a secret file others could have planted or read is refused', () => {
  after(temp.removeAll);

  for (const mode of [0o644, 0o660, 0o604, 0o640]) {
    it(`a ${mode.toString(8)} file is refused, naming it, and left as it is`, async () => {
      const dir = await temp.make();
      const path = join(dir, PASSWORD_FILE);
      await writeFile(path, 'planted\n');
      await chmod(path, mode);
      await assert.rejects(loadOrCreateSecret(dir, PASSWORD_FILE, 18), (err: Error) => err.message.includes(path) && err.message.includes('other users'));
      assert.equal(await readFile(path, 'utf8'), 'planted\n');
    });
  }

  it('a symlink (to a file out of the directory) is refused and not followed', async () => {
    const dir = await temp.make();
    const outside = join(await temp.make(), 'elsewhere');
    await writeFile(outside, 'planted\n', { mode: 0o600 });
    await symlink(outside, join(dir, PASSWORD_FILE));
    await assert.rejects(loadOrCreateSecret(dir, PASSWORD_FILE, 18), /not a regular file/);
    assert.equal(await readFile(outside, 'utf8'), 'planted\n');
  });
});
