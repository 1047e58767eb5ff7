import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
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
