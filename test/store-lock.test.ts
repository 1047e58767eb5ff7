import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { DataDirLockedError } from '../src/faults.ts';
import { createLogger } from '../src/log.ts';
import { nodeFileLayer } from '../src/fs/durable-fs.ts';
import { removeStaleLock } from '../src/store/lock.ts';
import { openStore } from '../src/store/open.ts';
import { recordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('store-lock-');
const tempDir = temp.make;

describe('store lock: one process per data directory', () => {
  after(temp.removeAll);

  it('a second open of a directory in use fails with DataDirLockedError, and close releases it', async () => {
    const dir = await tempDir();
    const store = await openStore(dir);
    await assert.rejects(openStore(dir), DataDirLockedError);
    await store.close();
    await (await openStore(dir)).close();
  });

  // Offsets in event-loop turns: the second open starts at each await of the first.
  for (const turns of [0, 1, 2, 3, 5, 8]) {
    it(`two opens of one directory in one process, the second ${turns} turns later: exactly one succeeds, the other fails with DataDirLockedError`, async () => {
      const dir = await tempDir();
      const second = async (): Promise<Awaited<ReturnType<typeof openStore>>> => {
        for (let i = 0; i < turns; i++) await nextTurn();
        return openStore(dir);
      };
      const results = await Promise.allSettled([openStore(dir), second()]);
      const opened = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
      assert.equal(opened.length, 1);
      assert.ok(failed[0] instanceof DataDirLockedError);
      assert.deepEqual((await readdir(dir)).filter((n) => n.startsWith('LOCK')), ['LOCK'], 'no temp lock file remains');
      for (const store of opened) await store.close();
      await (await openStore(dir)).close();
    });
  }

  it('a lock held by another live process fails with its pid', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'LOCK'), `${process.ppid}\n`);
    await assert.rejects(openStore(dir), { name: 'DataDirLockedError', pid: process.ppid, message: `data directory ${dir} is in use by another process (pid ${process.ppid})` });
  });

  it('a stale lock left by a process that no longer runs is taken over with a warning', async () => {
    const dir = await tempDir();
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    await writeFile(join(dir, 'LOCK'), `${gone}\n`);
    const logs: string[] = [];
    const store = await openStore(dir, { logger: createLogger({ level: 'warn', write: (l) => logs.push(l) }) });
    assert.equal(logs.length, 1);
    assert.match(logs[0] as string, /"level":40.*"stalePid":\d+.*taking over a stale lock/);
    await store.close();
  });

  it('a stale-lock takeover that finds another process\'s fresh lock in its place leaves that lock alone', async () => {
    const dir = await tempDir();
    const path = join(dir, 'LOCK');
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    // We read the dead pid; meanwhile another process took over and wrote its own (live) pid.
    await writeFile(path, `${process.ppid}\n`);
    assert.equal(await removeStaleLock(nodeFileLayer, path, `${gone}\n`), false);
    assert.equal(await readFile(path, 'utf8'), `${process.ppid}\n`);
    assert.deepEqual(await readdir(dir), ['LOCK']);
    await assert.rejects(openStore(dir), { name: 'DataDirLockedError', pid: process.ppid });
  });

  it('a stale-lock takeover removes the lock when it still holds the dead pid', async () => {
    const dir = await tempDir();
    const path = join(dir, 'LOCK');
    const gone = spawnSync(process.execPath, ['-e', '']).pid as number;
    await writeFile(path, `${gone}\n`);
    assert.equal(await removeStaleLock(nodeFileLayer, path, `${gone}\n`), true);
    assert.deepEqual(await readdir(dir), []);
  });

  it('creates the data directory 0700, fsyncs its parent, and creates its files 0600', async () => {
    const parent = await tempDir();
    const dir = join(parent, 'data');
    const rec = recordingFs();
    const store = await openStore(dir, { fs: rec.fs });
    assert.equal(rec.events[0], `syncDir ${basename(parent)}`);
    await store.create({ title: 'T', author: 'A', year: 1 });
    await store.compact();
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    for (const name of await readdir(dir)) assert.equal((await stat(join(dir, name))).mode & 0o777, 0o600, name);
    await store.close();
  });
});
