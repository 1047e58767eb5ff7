import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../src/log.ts';
import { writeCatalogue } from '../src/store/catalogue-file.ts';
import { openStore } from '../src/store/open.ts';
import { AS_ROOT, NOBODY } from './helpers/other-user.ts';
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

describe('data directory: one that already exists is made 0700, quietly (a debug line naming it)', () => {
  after(temp.removeAll);

  const rows = [
    { mode: 0o755, changed: true, why: 'as git checks out ./data' },
    { mode: 0o750, changed: true, why: 'open to its group' },
    { mode: 0o700, changed: false, why: 'already private' },
  ];
  for (const row of rows) {
    it(`an existing ${row.mode.toString(8)} directory (${row.why}) opens as 0700${row.changed ? ' with one debug line naming it and no warning' : ' without a line'}; the files in it keep their modes`, async () => {
      const dir = join(await temp.make(), 'data');
      await mkdir(dir);
      await chmod(dir, row.mode);
      const gitkeep = join(dir, '.gitkeep');
      await writeFile(gitkeep, '');
      await chmod(gitkeep, 0o644);
      const logs: string[] = [];
      const store = await openStore(dir, { logger: createLogger({ level: 'debug', write: (l) => logs.push(l) }) });
      await store.close();
      assert.equal((await stat(dir)).mode & 0o777, 0o700);
      assert.equal((await stat(gitkeep)).mode & 0o777, 0o644);
      // A safe default working as designed is nothing for a person to act on: debug, not a warning.
      const lines = logs.map((l) => JSON.parse(l) as { level: number; dir?: string; msg: string }).filter((l) => l.dir !== undefined);
      assert.deepEqual(
        lines.map((w) => ({ level: w.level, dir: w.dir })),
        row.changed ? [{ level: 20, dir }] : [],
      );
    });
  }

  it('an existing 755 directory holding a directory (a project root, /var/lib) keeps its mode, with one warning naming it', async () => {
    const dir = join(await temp.make(), 'data');
    await mkdir(join(dir, 'src'), { recursive: true });
    await chmod(dir, 0o755);
    const logs: string[] = [];
    const store = await openStore(dir, { logger: createLogger({ level: 'warn', write: (l) => logs.push(l) }) });
    await store.close();
    assert.equal((await stat(dir)).mode & 0o777, 0o755);
    assert.deepEqual(
      logs.map((l) => (JSON.parse(l) as { dir?: string }).dir),
      [dir],
    );
  });
});

describe('data directory: one others can write to and that holds directories stops startup', () => {
  after(async () => {
    await killAll();
    await temp.removeAll();
  });

  for (const mode of [0o777, 0o775, 0o757]) {
    it(`openStore rejects an existing ${mode.toString(8)} directory holding a directory, naming it, and changes nothing`, async () => {
      const dir = join(await temp.make(), 'data');
      await mkdir(join(dir, 'sub'), { recursive: true });
      await chmod(dir, mode);
      await assert.rejects(openStore(dir), (err: Error) => err.message.includes(dir) && err.message.includes('writable by other users'));
      assert.equal((await stat(dir)).mode & 0o7777, mode);
      assert.equal(existsSync(join(dir, 'LOCK')), false, 'nothing was written');
    });
  }

  it('the CLI exits 1 with one line on stderr', PROMPT, async () => {
    const dir = join(await temp.make(), 'data');
    await mkdir(join(dir, 'sub'), { recursive: true });
    await chmod(dir, 0o777);
    const exit = await runMain({ cwd: await temp.make(), args: ['--data-dir', dir, '--port', '0', '--host', '127.0.0.1'], env: { SECRET_TOKEN: 'data-dir-test-secret-that-is-32-bytes-long', AUTH_PASSWORD: 'pw' } });
    assert.equal(exit.code, 1, exit.stderr);
    const lines = exit.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `one line on stderr, got: ${exit.stderr}`);
    assert.match(lines[0] as string, /cannot open data directory .*writable by other users \(mode 777\)/);
  });
});

describe('data directory: one others own or can write to stops startup as it is, never made 0700 and used', () => {
  after(async () => {
    await killAll();
    await temp.removeAll();
  });

  /** An existing directory with no directory in it, holding a valid snapshot another user wrote (mode 0666, nobody's as root). */
  async function planted(mode: number): Promise<{ dir: string; snapshot: string }> {
    const source = await temp.make();
    await writeCatalogue(source, [{ id: 1, title: 'Planted', author: 'Nobody', year: 2000 }]);
    const dir = join(await temp.make(), 'data');
    await mkdir(dir);
    const snapshot = join(dir, 'snapshot.json');
    await copyFile(join(source, 'snapshot.json'), snapshot);
    await chmod(snapshot, 0o666);
    if (AS_ROOT.skip === undefined) await chown(snapshot, NOBODY, NOBODY);
    await chmod(dir, mode);
    return { dir, snapshot };
  }

  for (const mode of [0o777, 0o1777, 0o770, 0o707, 0o775, 0o703]) {
    const octal = mode.toString(8);
    it(`an existing ${octal} directory holding a planted snapshot is refused, naming it, its mode and chmod 700; nothing is changed`, async () => {
      const { dir, snapshot } = await planted(mode);
      const before = await readFile(snapshot);
      await assert.rejects(openStore(dir), (err: Error) => {
        assert.equal(err.name, 'DataNotPrivateError');
        assert.ok(err.message.startsWith(`${dir} is writable by other users (mode ${octal}): `), err.message);
        assert.ok(err.message.endsWith(`chmod 700 ${dir}`), err.message);
        return true;
      });
      assert.equal((await stat(dir)).mode & 0o7777, mode);
      assert.deepEqual(await readdir(dir), ['snapshot.json']);
      assert.deepEqual(await readFile(snapshot), before);
    });
  }

  it('a 777 directory holding directories (/tmp by mistake) is refused with the advice to use one of its own, not chmod', async () => {
    const dir = join(await temp.make(), 'shared');
    await mkdir(join(dir, 'someone-else'), { recursive: true });
    await chmod(dir, 0o777);
    await assert.rejects(openStore(dir), (err: Error) => err.message.startsWith(`${dir} is writable by other users (mode 777): `) && err.message.endsWith('give the service a directory of its own (DATA_DIR or --data-dir)'));
    assert.equal((await stat(dir)).mode & 0o777, 0o777);
  });

  it('a 0700 directory owned by nobody (uid 65534) is refused, naming its owner and chown', AS_ROOT, async () => {
    const dir = join(await temp.make(), 'data');
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, NOBODY, NOBODY);
    await assert.rejects(openStore(dir), (err: Error) => err.name === 'DataNotPrivateError' && err.message.startsWith(`${dir} belongs to uid ${NOBODY}, not to this service's user (uid 0): `) && err.message.endsWith(`chown 0 ${dir}`));
    assert.deepEqual(await readdir(dir), []);
  });

  it('the CLI on a 777 directory with no directory in it exits 1 with one line naming it, its mode and the fix, and leaves it 777', PROMPT, async () => {
    const { dir } = await planted(0o777);
    const exit = await runMain({ cwd: await temp.make(), args: ['--data-dir', dir, '--port', '0', '--host', '127.0.0.1'], env: { SECRET_TOKEN: 'data-dir-test-secret-that-is-32-bytes-long', AUTH_PASSWORD: 'pw' } });
    assert.equal(exit.code, 1, exit.stderr);
    assert.equal(exit.stdout, '');
    const lines = exit.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `one line on stderr, got: ${exit.stderr}`);
    assert.ok((lines[0] as string).startsWith(`book-catalogue: cannot open data directory ${dir}: ${dir} is writable by other users (mode 777): `), lines[0]);
    assert.ok((lines[0] as string).endsWith(`chmod 700 ${dir}`), lines[0]);
    assert.equal((await stat(dir)).mode & 0o777, 0o777);
  });

  it('a directory the store creates (parents too) is 0700 under umask 0, and opens again', async () => {
    const parent = join(await temp.make(), 'parent');
    const dir = join(parent, 'data');
    const umask = process.umask(0);
    try {
      await (await openStore(dir)).close();
    } finally {
      process.umask(umask);
    }
    assert.equal((await stat(parent)).mode & 0o777, 0o700);
    assert.equal((await stat(dir)).mode & 0o777, 0o700);
    await (await openStore(dir)).close();
  });
});

describe('data files are opened without following symlinks', () => {
  after(temp.removeAll);

  it('a journal planted as a symlink to a file elsewhere stops startup with ELOOP and the target is left as it is', async () => {
    const dir = join(await temp.make(), 'data');
    const store = await openStore(dir);
    await store.create({ title: 'Emma', author: 'Jane Austen', year: 1815 });
    await store.close();
    const journal = (await readdir(dir)).find((n) => /^journal-\d+\.jsonl$/.test(n)) as string;
    const target = join(await temp.make(), 'elsewhere.txt');
    await writeFile(target, 'not yours\n');
    await rm(join(dir, journal));
    await symlink(target, join(dir, journal));
    await assert.rejects(openStore(dir), { code: 'ELOOP' });
    assert.equal(await readFile(target, 'utf8'), 'not yours\n');
  });
});
