import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { access, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DataDirLockedError } from '../src/faults.ts';
import { nodeFileLayer, type FileLayer } from '../src/fs/durable-fs.ts';
import { openStore } from '../src/store/open.ts';
import { ioError } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('store-dir-faults-');
after(temp.removeAll);

/** The real layer with one call failing when `when` picks its path arguments. */
function failing(call: 'mkdir' | 'link' | 'open' | 'syncDir' | 'stat', code: string, when: (paths: string[]) => boolean = () => true): FileLayer {
  const real = nodeFileLayer[call] as (...args: unknown[]) => Promise<unknown>;
  const wrapped = (...args: unknown[]): Promise<unknown> =>
    when(args.filter((a): a is string => typeof a === 'string')) ? Promise.reject(ioError(code)) : real(...args);
  return { ...nodeFileLayer, [call]: wrapped };
}

const isLock = (paths: string[]): boolean => paths.some((p) => basename(p) === 'LOCK');

describe('data directory creation and the lock go through the FileLayer: a fault there reaches the caller as itself', () => {
  it('mkdir failing (EACCES) rejects openStore with that error and creates nothing; a retry on a working disk opens', async () => {
    const dir = join(await temp.make(), 'data');
    await assert.rejects(openStore(dir, { fs: failing('mkdir', 'EACCES') }), { code: 'EACCES' });
    await assert.rejects(access(dir), { code: 'ENOENT' });
    await (await openStore(dir)).close();
  });

  it('the fsync of the new directory\'s parent failing (EIO) rejects openStore with EIO', async () => {
    const parent = await temp.make();
    await assert.rejects(openStore(join(parent, 'data'), { fs: failing('syncDir', 'EIO') }), { code: 'EIO' });
  });

  it('stat of the data directory failing (EIO) while taking the lock rejects with EIO and leaves no LOCK', async () => {
    const dir = await temp.make();
    await assert.rejects(openStore(dir, { fs: failing('stat', 'EIO') }), { code: 'EIO' });
    assert.deepEqual(await readdir(dir), []);
  });

  it('linking the LOCK into place failing (EIO) rejects with EIO, leaves no lock or temp file, and the directory can be opened again', async () => {
    const dir = await temp.make();
    await assert.rejects(openStore(dir, { fs: failing('link', 'EIO', isLock) }), { code: 'EIO' });
    assert.deepEqual(await readdir(dir), []);
    await (await openStore(dir)).close();
  });

  it('reading an existing LOCK failing (EIO) rejects with EIO and never takes that lock over', async () => {
    const dir = await temp.make();
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    await writeFile(join(dir, 'LOCK'), `${gone}\n`);
    await assert.rejects(openStore(dir, { fs: failing('open', 'EIO', isLock) }), { code: 'EIO' });
    assert.equal(await readFile(join(dir, 'LOCK'), 'utf8'), `${gone}\n`);
  });

  it('a LOCK the file layer reads as another live process\'s is DataDirLockedError with that pid', async () => {
    const dir = await temp.make();
    await writeFile(join(dir, 'LOCK'), 'stand-in\n');
    const fs: FileLayer = {
      ...nodeFileLayer,
      async open(path, flags, mode) {
        const handle = await nodeFileLayer.open(path, flags, mode);
        return isLock([path]) ? Object.assign(handle, { readFile: async () => Buffer.from(`${process.ppid}\n`) }) : handle;
      },
    };
    await assert.rejects(openStore(dir, { fs }), (err: unknown) => err instanceof DataDirLockedError && err.pid === process.ppid);
  });

  it('a LOCK that is a symlink is not followed: openStore fails with ELOOP and the file it names is untouched', async () => {
    const dir = await temp.make();
    const elsewhere = join(await temp.make(), 'precious');
    await writeFile(elsewhere, 'not a lock\n');
    await symlink(elsewhere, join(dir, 'LOCK'));
    await assert.rejects(openStore(dir), { code: 'ELOOP' });
    assert.equal(await readFile(elsewhere, 'utf8'), 'not a lock\n');
    assert.deepEqual(await readdir(dir), ['LOCK']);
  });
});
