import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants } from 'node:fs';
import { chmod, chown, copyFile, link, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadOrCreateSecret, SECRET_FILE } from '../src/auth/secrets.ts';
import { nodeFileLayer, type FileHandleLike, type FileLayer } from '../src/fs/durable-fs.ts';
import { createLogger } from '../src/log.ts';
import { openStore, readCatalogue, writeCatalogue } from '../src/index.ts';
import { WriteProbe } from '../src/store/write-probe.ts';
import { killAll, runMain } from './helpers/process.ts';
import { AS_ROOT, NOBODY } from './helpers/other-user.ts';
import { bookIn } from './helpers/store-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('data-files-');
after(async () => {
  await killAll();
  await temp.removeAll();
});

/** A hang fails the test instead of the suite. */
const PROMPT = { timeout: 10_000 };
const REFUSED = { name: 'DataNotPrivateError', code: 'ERR_DATA_NOT_PRIVATE' };
const JOURNAL = /^journal-\d{16}\.jsonl$/;

/** A data directory holding a snapshot (book 1) and a journal after it (book 2), closed. */
async function catalogue(): Promise<{ dir: string; snapshot: string; journal: string }> {
  const dir = join(await temp.make(), 'data');
  const store = await openStore(dir);
  await store.create({ title: 'Emma', author: 'Jane Austen', year: 1815 });
  await store.compact();
  await store.create({ title: 'Dune', author: 'Frank Herbert', year: 1965 });
  await store.close();
  const journal = (await readdir(dir)).find((n) => JOURNAL.test(n));
  assert.ok(journal !== undefined, 'a journal after the snapshot');
  return { dir, snapshot: join(dir, 'snapshot.json'), journal: join(dir, journal) };
}

/** openStore refuses, naming `file` and saying `why`; the directory holds no LOCK afterwards. */
async function refused(dir: string, file: string, why: RegExp): Promise<void> {
  await assert.rejects(openStore(dir), (err: Error & { path?: string }) => {
    assert.equal(err.name, REFUSED.name, err.message);
    assert.equal((err as { code?: string }).code, REFUSED.code);
    assert.equal(err.path, file);
    assert.ok(err.message.startsWith(`${file} `), err.message);
    assert.match(err.message, why);
    return true;
  });
  assert.equal((await readdir(dir)).includes('LOCK'), false, 'the lock was released');
}

describe('data files: a file another user made, or can change, is refused', () => {
  it('a snapshot owned by nobody (uid 65534) stops startup, naming it and its owner', AS_ROOT, async () => {
    const { dir, snapshot } = await catalogue();
    await chown(snapshot, NOBODY, NOBODY);
    await refused(dir, snapshot, /belongs to uid 65534, not to this service's user \(uid 0\)/);
  });

  it('a journal nobody hard-linked in (its own file, mode 0666, two links) stops startup and receives nothing', AS_ROOT, async () => {
    const { dir, journal } = await catalogue();
    const theirs = join(await temp.make(), 'mine.jsonl');
    await copyFile(journal, theirs);
    await chown(theirs, NOBODY, NOBODY);
    await chmod(theirs, 0o666);
    await rm(journal);
    await link(theirs, journal);
    const before = await readFile(theirs);
    await refused(dir, journal, /belongs to uid 65534/);
    assert.deepEqual(await readFile(theirs), before, 'nothing reached the file through its other name');
  });

  it('a LOCK owned by nobody stops startup instead of being taken over', AS_ROOT, async () => {
    const { dir } = await catalogue();
    const lock = join(dir, 'LOCK');
    await writeFile(lock, '999999999\n');
    await chown(lock, NOBODY, NOBODY);
    await assert.rejects(openStore(dir), (err: Error & { path?: string }) => err.name === REFUSED.name && err.path === lock && /belongs to uid 65534/.test(err.message));
    assert.equal(await readFile(lock, 'utf8'), '999999999\n');
  });

  it('a generated secret owned by nobody is refused', AS_ROOT, async () => {
    const dir = await temp.make();
    const secret = join(dir, SECRET_FILE);
    await writeFile(secret, 'planted\n', { mode: 0o600 });
    await chown(secret, NOBODY, NOBODY);
    await assert.rejects(loadOrCreateSecret(dir, SECRET_FILE, 32), (err: Error) => err.name === REFUSED.name && err.message.startsWith(`${secret} belongs to uid 65534`));
  });

  it('a journal with a second name (nlink 2) stops startup, and nothing is appended through either name', async () => {
    const { dir, journal } = await catalogue();
    const other = join(await temp.make(), 'other-name');
    await link(journal, other);
    const before = await readFile(other);
    await refused(dir, journal, /has 2 links/);
    assert.deepEqual(await readFile(other), before);
  });

  it('a generated secret with a second name is refused', async () => {
    const dir = await temp.make();
    const first = await loadOrCreateSecret(dir, SECRET_FILE, 32);
    await link(first.path, join(await temp.make(), 'copy'));
    await assert.rejects(loadOrCreateSecret(dir, SECRET_FILE, 32), (err: Error) => err.name === REFUSED.name && err.message.startsWith(`${first.path} has 2 links`));
  });

  for (const which of ['snapshot', 'journal'] as const) {
    it(`a ${which} others can write to (mode 0666) stops startup, naming it and its mode`, async () => {
      const files = await catalogue();
      await chmod(files[which], 0o666);
      await refused(files.dir, files[which], /is writable by other users \(mode 666\)/);
    });
  }

  it('a journal group can write to (mode 0620) stops startup; one others may only read (0644, a restored backup) is used', async () => {
    const { dir, journal } = await catalogue();
    await chmod(journal, 0o620);
    await refused(dir, journal, /\(mode 620\)/);
    await chmod(journal, 0o644);
    const store = await openStore(dir);
    assert.equal(bookIn(store, 2)?.title, 'Dune');
    await store.close();
  });

  it('a FIFO in the snapshot\'s place is refused at once as not a regular file', { timeout: 20_000 }, async () => {
    const dir = join(await temp.make(), 'data');
    await (await openStore(dir)).close();
    const fifo = join(dir, 'snapshot.json');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    try {
      await within(refused(dir, fifo, /is not a regular file/), 'openStore did not answer: it waits in open() for a writer to the FIFO');
    } finally {
      // A store that waits in open() for a writer is let go, so the file can end.
      const writer = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
      await writer?.close();
    }
  });

  it('the CLI prints one line naming the file and what is wrong, and exits 1', PROMPT, async () => {
    const { dir, snapshot } = await catalogue();
    await chmod(snapshot, 0o666);
    const exit = await runMain({ cwd: await temp.make(), args: ['--data-dir', dir, '--port', '0', '--host', '127.0.0.1'], env: { SECRET_TOKEN: 'data-files-test-secret-that-is-32-bytes-long', AUTH_PASSWORD: 'pw' } });
    assert.equal(exit.code, 1, exit.stderr);
    const lines = exit.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, `one line on stderr, got: ${exit.stderr}`);
    assert.ok((lines[0] as string).startsWith(`book-catalogue: cannot open data directory ${dir}: ${snapshot} is writable by other users (mode 666): `), lines[0]);
  });

  it('readCatalogue (export) refuses such a snapshot too', async () => {
    const { dir, snapshot } = await catalogue();
    await chmod(snapshot, 0o666);
    await assert.rejects(readCatalogue(dir), { ...REFUSED, path: snapshot });
  });

  it('a clean directory opens: every file the store made passes its own check on the next start', async () => {
    const { dir } = await catalogue();
    const store = await openStore(dir);
    assert.equal(bookIn(store, 1)?.title, 'Emma');
    assert.equal(bookIn(store, 2)?.title, 'Dune');
    await store.close();
  });
});

/**
 * The real file layer, with each handle remembering whether fstat was asked before anything was
 * read from or written to it. Names are reduced to their kind (`journal`, `LOCK.<temp>`, …).
 */
function fstatWatchingLayer(): { fs: FileLayer; opened: Set<string>; unchecked: string[] } {
  const opened = new Set<string>();
  const unchecked: string[] = [];
  const kind = (path: string): string =>
    basename(path)
      .replace(/^journal-\d{16}\.jsonl/, 'journal')
      .replace(/^LOCK\.stale\.[\w-]+$/, 'LOCK.<aside>')
      .replace(/^LOCK\.\d+\.[\w-]+$/, 'LOCK.<temp>')
      .replace(/\.torn-\d+/, '.torn');
  const fs: FileLayer = {
    ...nodeFileLayer,
    async open(path, flags, mode) {
      const h = await nodeFileLayer.open(path, flags, mode);
      const name = `${flags} ${kind(path)}`;
      opened.add(name);
      let checked = false;
      const use = <T>(call: string, run: () => Promise<T>): Promise<T> => {
        if (!checked) unchecked.push(`${call} before fstat: ${name}`);
        return run();
      };
      const handle: FileHandleLike = {
        async stat() {
          checked = true;
          return h.stat();
        },
        write: (buffer, offset, length) => use('write', () => h.write(buffer, offset, length)),
        datasync: () => use('datasync', () => h.datasync()),
        sync: () => use('sync', () => h.sync()),
        truncate: (length) => use('truncate', () => h.truncate(length)),
        readFile: () => use('readFile', () => h.readFile()),
        close: () => h.close(),
      };
      return handle;
    },
  };
  return { fs, opened, unchecked };
}

describe('data files: a file this user may not open is refused as another user\'s, not as a bare EACCES', () => {
  it('a snapshot open() refuses with EACCES (nobody\'s, 0600, for a service that is not root) stops startup naming it', async () => {
    const { dir, snapshot } = await catalogue();
    const fs: FileLayer = {
      ...nodeFileLayer,
      open: (path, flags, mode) =>
        path === snapshot ? Promise.reject(Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' })) : nodeFileLayer.open(path, flags, mode),
    };
    await assert.rejects(openStore(dir, { fs }), (err: Error & { path?: string }) => {
      assert.equal(err.name, REFUSED.name, err.message);
      assert.equal(err.path, snapshot);
      assert.match(err.message, /cannot be opened by this service's user \(uid \d+\): another user's file/);
      return true;
    });
  });
});

describe('data files: a file the store creates and may not is the directory\'s EACCES, not another user\'s file', () => {
  it('a lock temp file the directory refuses (EACCES on open with wx) stops startup with the EACCES itself', async () => {
    const { dir } = await catalogue();
    const fs: FileLayer = {
      ...nodeFileLayer,
      open: (path, flags, mode) =>
        flags === 'wx' ? Promise.reject(Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' })) : nodeFileLayer.open(path, flags, mode),
    };
    await assert.rejects(openStore(dir, { fs }), (err: Error & { code?: string }) => {
      assert.notEqual(err.name, REFUSED.name, err.message);
      assert.equal(err.code, 'EACCES', err.message);
      assert.doesNotMatch(err.message, /another user's file|planted/);
      return true;
    });
  });
});

describe('data files: every file the store opens is checked with fstat on its descriptor before use', () => {
  it('journals, snapshot, temp files, lock, torn-record keep, write probe, secrets, import and export', async () => {
    const { fs, opened, unchecked } = fstatWatchingLayer();
    const dir = join(await temp.make(), 'data');
    const store = await openStore(dir, { fs });
    await store.create({ title: 'Emma', author: 'Jane Austen', year: 1815 });
    await store.compact();
    await store.create({ title: 'Dune', author: 'Frank Herbert', year: 1965 });
    await store.close();
    // A torn final record (a crash mid-append) and a LOCK a killed process left.
    const journal = (await readdir(dir)).find((n) => JOURNAL.test(n)) as string;
    await writeFile(join(dir, journal), '{"seq":3,"op":"del"', { flag: 'a' });
    await writeFile(join(dir, 'LOCK'), '999999999\n');
    const reopened = await openStore(dir, { fs });
    await reopened.close();
    let probed!: () => void;
    const logger = createLogger({
      level: 'info',
      write: (line) => {
        if (line.includes('accepts durable writes again')) probed();
      },
    });
    const probe = new WriteProbe({ fs, dir, logger }, 1);
    await within(new Promise<void>((resolve) => {
      probed = resolve;
      probe.start();
    }), 'the write probe never succeeded');
    await loadOrCreateSecret(dir, SECRET_FILE, 32, fs);
    await loadOrCreateSecret(dir, SECRET_FILE, 32, fs);
    const restored = join(await temp.make(), 'restored');
    await writeCatalogue(restored, [{ id: 7, title: 'T', author: 'A', year: 1 }], fs);
    await readCatalogue(restored, fs);
    const expected = [
      'wx LOCK.<temp>', 'r LOCK', 'r LOCK.<aside>', 'ax journal', 'a journal', 'r journal', 'r+ journal', 'wx journal.torn.tmp',
      'wx snapshot.json.tmp', 'r snapshot.json', 'wx write-probe.tmp', 'wx secret-token.tmp', 'r secret-token',
    ];
    assert.deepEqual(expected.filter((k) => !opened.has(k)), [], `each kind was opened: ${[...opened].join(', ')}`);
    assert.deepEqual(unchecked, []);
  });
});

/** `promise`, or a failure saying `what` after 10 s. */
async function within(promise: Promise<void>, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what)), 10_000);
  });
  try {
    await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

describe('data files: the modes the store gives them pass its own check', () => {
  it('every file a catalogue leaves is 0600, one link, this user\'s', async () => {
    const { dir } = await catalogue();
    for (const name of await readdir(dir)) {
      const info = await stat(join(dir, name));
      assert.deepEqual({ name, mode: info.mode & 0o777, nlink: info.nlink, uid: info.uid }, { name, mode: 0o600, nlink: 1, uid: process.getuid?.() ?? info.uid });
    }
  });
});
