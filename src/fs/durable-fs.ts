import { constants as fsConstants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../log.ts';

/**
 * The part of a file handle the store uses (StoreOptions.fs); `node:fs/promises` FileHandle
 * satisfies it. `datasync`/`sync` must not resolve before the data is on stable storage.
 */
export interface FileHandleLike {
  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/** What the store asks about a path (FileLayer.stat). */
export interface FileInfo {
  /** Permission bits (mode & 0o777). */
  mode: number;
  directory: boolean;
  /** `<device>:<inode>`: which directory a lock was made in (lock.ts). */
  identity: string;
}

/**
 * Every file-system call the store makes, in one injectable object, so tests can make fsync slow
 * or fail and can observe the order of writes, syncs and renames (STYLE.md: Store): the data
 * files, the data directory's creation and the lock alike.
 */
export interface FileLayer {
  open(path: string, flags: 'a' | 'ax' | 'r+' | 'wx', mode?: number): Promise<FileHandleLike>;
  readFile(path: string): Promise<Buffer>;
  readdir(dir: string): Promise<string[]>;
  /** The names in `dir` that are directories themselves (a symlink is not one). */
  subdirectories(dir: string): Promise<string[]>;
  /** Follows symlinks: a data directory may be reached through one. */
  stat(path: string): Promise<FileInfo>;
  /** One level; EEXIST when `dir` exists. */
  mkdir(dir: string, mode: number): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  /** A hard link: fails with EEXIST when `to` exists, never replacing it (the lock's atomic create). */
  link(from: string, to: string): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** fsync of a directory: makes a file creation, rename or unlink in it durable. */
  syncDir(dir: string): Promise<void>;
}

/**
 * The data files are opened without following a symlink (O_NOFOLLOW; ELOOP when the name is
 * one): a link planted in the directory must not make the store read, truncate or append to a
 * file elsewhere. O_NOFOLLOW is 0 where the platform has none.
 */
const { O_WRONLY, O_RDWR, O_RDONLY, O_CREAT, O_APPEND, O_EXCL, O_TRUNC, O_NOFOLLOW = 0 } = fsConstants;
const OPEN_FLAGS = {
  a: O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW,
  ax: O_WRONLY | O_CREAT | O_APPEND | O_EXCL | O_NOFOLLOW,
  'r+': O_RDWR | O_NOFOLLOW,
  wx: O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_NOFOLLOW,
} as const;

export const nodeFileLayer: FileLayer = {
  open: (path, flags, mode) => fsp.open(path, OPEN_FLAGS[flags], mode),
  readFile: (path) => fsp.readFile(path, { flag: O_RDONLY | O_NOFOLLOW }),
  readdir: (dir) => fsp.readdir(dir),
  subdirectories: async (dir) => (await fsp.readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name),
  async stat(path) {
    const info = await fsp.stat(path, { bigint: true });
    return { mode: Number(info.mode & 0o777n), directory: info.isDirectory(), identity: `${info.dev}:${info.ino}` };
  },
  mkdir: async (dir, mode) => {
    await fsp.mkdir(dir, { mode });
  },
  chmod: (path, mode) => fsp.chmod(path, mode),
  link: (from, to) => fsp.link(from, to),
  rename: (from, to) => fsp.rename(from, to),
  unlink: (path) => fsp.unlink(path),
  async syncDir(dir) {
    const handle = await fsp.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  },
};

/** The catalogue is readable by its owner alone (docs/contract.md, "Configuration", keeps secrets 0600 beside it). */
export const FILE_MODE = 0o600;
export const TEMP_SUFFIX = '.tmp';

export function isNotFound(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** Removes a file; one already gone is what was wanted. */
export async function unlinkIfPresent(fs: FileLayer, path: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** write(2) may write less than asked; loop until every byte is in the file. */
export async function writeAll(handle: FileHandleLike, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done);
    done += bytesWritten;
  }
}

/**
 * Creates the data directory (0700, parents too) if missing, and makes the new entries durable
 * by fsyncing the directory that holds the topmost one and the data directory's parent. One that
 * already exists is made 0700 too: a fresh clone's `./data` comes from git as 0755.
 */
export async function makeDataDir(fs: FileLayer, dir: string, logger: Logger): Promise<void> {
  const created = await makeDirs(fs, dir);
  if (created === undefined) return restrictDataDir(fs, dir, logger);
  for (const parent of new Set([dirname(created), dirname(dir)])) await fs.syncDir(parent);
}

/**
 * Only the directory itself: files others put there (a `.gitkeep`) keep their modes. A directory
 * holding directories is not the store's own (a data directory never has one): `--data-dir .`,
 * a home directory or /var/lib by mistake must not be locked away from everyone else.
 */
async function restrictDataDir(fs: FileLayer, dir: string, logger: Logger): Promise<void> {
  const { mode } = await fs.stat(dir);
  if ((mode & 0o077) === 0) return;
  const fields = { dir, mode: mode.toString(8) };
  // Others who can write here can plant a secret, a journal or a symlink the service would trust.
  const refuse = (why: string): Error =>
    new Error(`${dir} is writable by other users (mode ${mode.toString(8)}) and ${why}; make it 0700 (chmod 700) and start again`);
  const writableByOthers = (mode & 0o022) !== 0;
  if ((await fs.subdirectories(dir)).length > 0) {
    if (writableByOthers) throw refuse('holds directories, so it is not changed');
    logger.warn('the data directory is open to other users; left as it is because it holds directories', fields);
    return;
  }
  try {
    await fs.chmod(dir, 0o700);
    // A fresh clone's ./data made private as designed: nothing for a person to act on.
    logger.debug('the data directory was open to other users; made it 0700', fields);
  } catch (err) {
    if (writableByOthers) throw refuse(`could not be made 0700 (${(err as Error).message})`);
    // Only readable by others and not ours to change (another owner): say so and go on.
    logger.warn('the data directory is open to other users and could not be made 0700', { ...fields, err: err as Error });
  }
}

/**
 * mkdir -p one level at a time, each level tried at most twice, so it always ends: Node's
 * recursive mkdir spins forever where mkdir says ENOENT under a parent that exists (/proc/nope).
 * Returns the topmost directory it created, or undefined when `dir` already was one.
 */
async function makeDirs(fs: FileLayer, dir: string): Promise<string | undefined> {
  try {
    return (await makeDir(fs, dir)) ? dir : undefined;
  } catch (err) {
    const parent = dirname(dir);
    if (!isNotFound(err) || parent === dir) throw err;
    const created = await makeDirs(fs, parent);
    return (await makeDir(fs, dir)) ? (created ?? dir) : created;
  }
}

/** true when it created `dir`, false when `dir` already is a directory. */
async function makeDir(fs: FileLayer, dir: string): Promise<boolean> {
  try {
    await fs.mkdir(dir, 0o700);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (!(await fs.stat(dir)).directory) {
      throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', path: dir });
    }
    return false;
  }
}

/**
 * Appends and returns only once fdatasync has returned: the durable acknowledgement rule.
 * Resolves with the seconds the fdatasync took (the store reports them as a metric).
 */
export async function appendAndSync(handle: FileHandleLike, bytes: Uint8Array): Promise<number> {
  await writeAll(handle, bytes);
  const start = performance.now();
  await handle.datasync();
  return (performance.now() - start) / 1000;
}

/**
 * Creates a new file for appending, makes its directory entry durable, then writes `header` and
 * makes it durable; on failure the file is removed. Append mode: after a failed write is
 * truncated away, the next write lands at the new end.
 */
export async function createForAppend(fs: FileLayer, path: string, header: Uint8Array): Promise<FileHandleLike> {
  const handle = await fs.open(path, 'ax', FILE_MODE);
  try {
    await fs.syncDir(dirname(path));
    await appendAndSync(handle, header);
  } catch (err) {
    await handle.close();
    await fs.unlink(path).catch(() => {});
    throw err;
  }
  return handle;
}

/**
 * write-file-atomic's recipe plus the step it leaves out: temp file → write → fsync → rename →
 * fsync of the directory, so after a crash the file is either wholly old or wholly new.
 * `fill` writes the content through `write` (chunked by the caller, so it can yield).
 */
export async function writeAtomic(
  fs: FileLayer,
  path: string,
  fill: (write: (bytes: Uint8Array) => Promise<void>) => Promise<void>,
): Promise<void> {
  const temp = `${path}${TEMP_SUFFIX}`;
  await unlinkIfPresent(fs, temp);
  const handle = await fs.open(temp, 'wx', FILE_MODE);
  try {
    try {
      await fill((bytes) => writeAll(handle, bytes));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, path);
  } catch (err) {
    await fs.unlink(temp).catch(() => {});
    throw err;
  }
  await fs.syncDir(dirname(path));
}
