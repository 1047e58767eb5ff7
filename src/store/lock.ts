import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { DataDirLockedError } from '../faults.ts';
import type { Logger } from '../log.ts';
import { LOCK_FILE_RULE, openDataFile, readDataFile } from '../fs/data-file.ts';
import { isNotFound, writeAll, type FileLayer } from '../fs/durable-fs.ts';

export const LOCK_FILE = 'LOCK';

/** Directories this process holds: a second open in the same process fails like another process. */
const held = new Set<string>();

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The directory a lock was made in (`dir <dev>:<ino>` on its second line); undefined in a pid-only lock. */
function lockedDirectory(text: string): string | undefined {
  return /^dir (\S+)$/m.exec(text)?.[1];
}

/**
 * Writes our pid and the directory's identity to a private temp file and links it into place: the
 * lock appears atomically with its content, so no other process can ever read an empty lock and
 * mistake it for a stale one.
 */
async function createLock(fs: FileLayer, dir: string, path: string, identity: string): Promise<void> {
  // Unique per attempt: two opens in one process (or a pid reused) never share a temp file.
  const temp = `${path}.${process.pid}.${randomUUID()}`;
  const handle = await openDataFile(fs, temp, 'wx');
  try {
    try {
      await writeAll(handle, Buffer.from(`${process.pid}\ndir ${identity}\n`));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.link(temp, path);
  } finally {
    await fs.unlink(temp).catch(() => {});
  }
  await fs.syncDir(dir);
}

/** The lock's text; '' when it is gone (its owner released it between our create and this read). */
async function readLock(fs: FileLayer, path: string): Promise<string> {
  try {
    return (await readDataFile(fs, path, LOCK_FILE_RULE)).toString('utf8');
  } catch (err) {
    // Any other failure says nothing about the owner: guessing "stale" could take a live lock over.
    if (isNotFound(err)) return '';
    throw err;
  }
}

/**
 * One process per data directory: a lock file holding the owner's pid, created only if absent.
 * A lock whose pid no longer runs was left by a killed process and is taken over with a warning.
 * Returns the release function.
 */
export async function acquireLock(fs: FileLayer, dir: string, logger: Logger): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  if (held.has(path)) throw new DataDirLockedError(dir, process.pid);
  // Reserved before the first await: a second open in this process fails here instead of racing.
  held.add(path);
  try {
    await takeLock(fs, dir, path, logger);
  } catch (err) {
    held.delete(path);
    throw err;
  }
  return async () => {
    held.delete(path);
    await fs.unlink(path).catch(() => {});
  };
}

/**
 * The lock names the directory it was made in (its device and inode numbers), so that one copied
 * along with the data files (cp -a, rsync, a restored backup) is known for what it is: the lock of
 * another directory, whose live pid says nothing about this one.
 */
async function takeLock(fs: FileLayer, dir: string, path: string, logger: Logger): Promise<void> {
  const { identity } = await fs.stat(dir);
  for (let attempt = 0; ; attempt++) {
    try {
      await createLock(fs, dir, path, identity);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const text = await readLock(fs, path);
      const pid = Number.parseInt(text, 10);
      const locked = lockedDirectory(text);
      const copied = locked !== undefined && locked !== identity;
      const stale = copied || !(Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid));
      // A second EEXIST means another process took the stale lock over first.
      if (!stale || attempt > 0) throw new DataDirLockedError(dir, pid);
      if (await removeStaleLock(fs, path, text)) {
        const stalePid = Number.isNaN(pid) ? null : pid;
        if (copied) logger.warn('replacing a LOCK copied from another directory: its process does not hold this one', { lockFile: path, stalePid });
        else logger.warn('taking over a stale lock left by a process that no longer runs', { lockFile: path, stalePid });
      }
    }
  }
}

/**
 * Removes the lock at `path` only if it still holds `staleText`, and says whether it did.
 * Unlinking by path would race: between our read and the unlink another process may have taken
 * the stale lock over, and we would delete its fresh lock. So the lock is renamed aside first
 * (atomic: exactly one process gets it) and checked there; a fresh lock is linked back (link,
 * not rename: never over a lock made since). Left open: while a fresh lock is aside, a third
 * process starting in that instant can make its own, and two then hold the directory.
 */
export async function removeStaleLock(fs: FileLayer, path: string, staleText: string): Promise<boolean> {
  const aside = `${path}.stale.${randomUUID()}`;
  try {
    await fs.rename(path, aside);
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
  try {
    if ((await readDataFile(fs, aside, LOCK_FILE_RULE)).toString('utf8') === staleText) return true;
    await fs.link(aside, path).catch(() => {});
    return false;
  } finally {
    await fs.unlink(aside).catch(() => {});
  }
}
