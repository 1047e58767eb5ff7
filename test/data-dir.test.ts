import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../src/store/open.ts';
import { killAll, runMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('data-dir-');
/** A hang fails the test instead of the suite: the failure must come promptly, whatever the path. */
const PROMPT = { timeout: 10_000 };
/** procfs answers mkdir with ENOENT under a directory that exists (Node's recursive mkdir spins). */
const HAS_PROC = existsSync('/proc');

describe('data directory: an impossible path fails promptly with an error', () => {
  let file: string;
  before(async () => {
    file = join(await temp.make(), 'a-file');
    await writeFile(file, 'x');
  });
  after(async () => {
    await killAll();
    await temp.removeAll();
  });

  const rows: { name: string; path: () => string; code: string }[] = [
    { name: 'a directory procfs refuses to create (/proc/nope)', path: () => (HAS_PROC ? '/proc/nope' : join(file, 'nope')), code: HAS_PROC ? 'ENOENT' : 'ENOTDIR' },
    { name: 'a directory two levels under /proc', path: () => (HAS_PROC ? '/proc/nope/data' : join(file, 'nope', 'data')), code: HAS_PROC ? 'ENOENT' : 'ENOTDIR' },
    { name: 'a directory under a regular file', path: () => join(file, 'data'), code: 'ENOTDIR' },
    { name: 'a path that is a regular file', path: () => file, code: 'ENOTDIR' },
  ];
  for (const row of rows) {
    it(`openStore rejects ${row.name} with ${row.code}`, PROMPT, async () => {
      await assert.rejects(openStore(row.path()), { code: row.code });
    });
  }

  it('the CLI with --data-dir /proc/nope exits non-zero with one line on stderr', PROMPT, async () => {
    const dataDir = HAS_PROC ? '/proc/nope' : join(file, 'nope');
    const exit = await runMain({ cwd: await temp.make(), args: ['--data-dir', dataDir, '--port', '0', '--host', '127.0.0.1'] });
    assert.notEqual(exit.code, 0);
    assert.equal(exit.signal, null);
    const lines = exit.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `one line on stderr, got: ${exit.stderr}`);
    assert.match(lines[0] as string, /cannot open data directory .*nope/);
  });
});
