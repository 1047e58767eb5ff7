import { dirname } from 'node:path';
import { DataNotPrivateError } from '../faults.ts';
import type { Logger } from '../log.ts';
import { serviceUid } from './data-file.ts';
import { isNotFound, type FileLayer } from './durable-fs.ts';

/**
 * Creates the data directory (0700, parents too) if missing, and makes the new entries durable
 * by fsyncing the directory that holds the topmost one and the data directory's parent. One that
 * already exists must be ours alone (trustDataDir); one others may only read is made 0700: a
 * fresh clone's `./data` comes from git as 0755.
 */
export async function makeDataDir(fs: FileLayer, dir: string, logger: Logger): Promise<void> {
  const created = await makeDirs(fs, dir);
  if (created === undefined) return restrictDataDir(fs, dir, await trustDataDir(fs, dir), logger);
  for (const parent of new Set([dirname(created), dirname(dir)])) await fs.syncDir(parent);
}

/**
 * The data directory must be ours alone (docs/contract.md, "Durability"): whoever else owns it,
 * or can write to it as its group or as anyone, may already have put files there (a snapshot, a
 * journal, a secret) that the store would trust. It is refused as it is: a chmod now would not
 * make what it already holds ours. Resolves with its permission bits.
 */
export async function trustDataDir(fs: FileLayer, dir: string): Promise<number> {
  const { mode, uid } = await fs.stat(dir);
  const ours = serviceUid();
  const problems: string[] = [];
  const fixes: string[] = [];
  if (ours !== undefined && uid !== ours) {
    problems.push(`belongs to uid ${uid}, not to this service's user (uid ${ours})`);
    fixes.push(`chown ${ours} ${dir}`);
  }
  if ((mode & 0o022) !== 0) {
    problems.push(`is writable by other users (mode ${mode.toString(8)})`);
    fixes.push(`chmod 700 ${dir}`);
  }
  if (problems.length === 0) return mode;
  // A directory holding directories was never a data directory (`.`, /tmp, /var/lib): chmod is the wrong advice there.
  const fix =
    (await fs.subdirectories(dir)).length > 0
      ? 'it holds directories, so give the service a directory of its own (DATA_DIR or --data-dir)'
      : `check what it holds, then ${fixes.join(' && ')}`;
  throw new DataNotPrivateError(dir, problems.join(' and '), `files planted in it would be trusted, so nothing was changed; ${fix}`);
}

/**
 * A directory of ours that others may only read: nothing can have been planted in it, and
 * making it 0700 hides the files' names too. Only the directory itself: files others put there
 * (a `.gitkeep`) keep their modes. A directory holding directories is not the store's own (a data
 * directory never has one): `--data-dir .`, a home directory or /var/lib by mistake must not be
 * locked away from everyone else.
 */
async function restrictDataDir(fs: FileLayer, dir: string, mode: number, logger: Logger): Promise<void> {
  if ((mode & 0o077) === 0) return;
  const fields = { dir, mode: mode.toString(8) };
  if ((await fs.subdirectories(dir)).length > 0) {
    logger.warn('the data directory is open to other users; left as it is because it holds directories', fields);
    return;
  }
  try {
    await fs.chmod(dir, 0o700);
    // A fresh clone's ./data made private as designed: nothing for a person to act on.
    logger.debug('the data directory was open to other users; made it 0700', fields);
  } catch (err) {
    // Others can list the names in it, never write there: say so and go on.
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
