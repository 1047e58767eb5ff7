import { constants as fsConstants } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { dirname } from 'node:path';
import { openDataFile } from './data-file.ts';

/**
 * What fstat(2) says about an open file (FileHandleLike.stat): enough to tell whether a data file
 * is the service's own (data-file.ts). `node:fs` Stats satisfies it.
 */
export interface FileStatus {
  mode: number;
  uid: number;
  nlink: number;
  isFile(): boolean;
}

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
  /** fstat of this descriptor: what was opened, not whatever the name points at by now. */
  stat(): Promise<FileStatus>;
  /** The whole file, from a handle opened with `r`. */
  readFile(): Promise<Buffer>;
}

/** What the store asks about a path (FileLayer.stat). */
export interface FileInfo {
  /** Permission bits, with setuid, setgid and sticky (mode & 0o7777): a message shows them as `ls` would. */
  mode: number;
  /** The owner's user id. */
  uid: number;
  directory: boolean;
  /** `<device>:<inode>`: which directory a lock was made in (lock.ts). */
  identity: string;
}

/**
 * Every file-system call the store makes, in one injectable object, so tests can make fsync slow
 * or fail and can observe the order of writes, syncs and renames (docs/contract.md, "Durability"):
 * the data files, the data directory's creation and the lock alike.
 */
export interface FileLayer {
  /** The store opens data files through openDataFile (data-file.ts), which checks each one. */
  open(path: string, flags: OpenFlags, mode?: number): Promise<FileHandleLike>;
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
 * file elsewhere. O_NOFOLLOW is 0 where the platform has none. A name that may already exist is
 * opened O_NONBLOCK (no effect on a regular file): a FIFO planted there would otherwise hold
 * open() until a writer came, before fstat could refuse it.
 */
const { O_WRONLY, O_RDWR, O_RDONLY, O_CREAT, O_APPEND, O_EXCL, O_TRUNC, O_NOFOLLOW = 0, O_NONBLOCK = 0 } = fsConstants;
const OPEN_FLAGS = {
  a: O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK,
  ax: O_WRONLY | O_CREAT | O_APPEND | O_EXCL | O_NOFOLLOW,
  r: O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
  'r+': O_RDWR | O_NOFOLLOW | O_NONBLOCK,
  wx: O_WRONLY | O_CREAT | O_TRUNC | O_EXCL | O_NOFOLLOW,
} as const;
export type OpenFlags = keyof typeof OPEN_FLAGS;

export const nodeFileLayer: FileLayer = {
  open: (path, flags, mode) => fsp.open(path, OPEN_FLAGS[flags], mode),
  readdir: (dir) => fsp.readdir(dir),
  subdirectories: async (dir) => (await fsp.readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name),
  async stat(path) {
    const info = await fsp.stat(path, { bigint: true });
    return { mode: Number(info.mode & 0o7777n), uid: Number(info.uid), directory: info.isDirectory(), identity: `${info.dev}:${info.ino}` };
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
  const handle = await openDataFile(fs, path, 'ax');
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
  const handle = await openDataFile(fs, temp, 'wx');
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
