import { DataNotPrivateError } from '../faults.ts';
import type { FileHandleLike, FileLayer, FileStatus, OpenFlags } from './durable-fs.ts';

/** The catalogue is readable by its owner alone (docs/contract.md, "Configuration", keeps secrets 0600 beside it). */
export const FILE_MODE = 0o600;

/** What a file the store opens must be, beyond a regular file of the service's user. */
export interface FileRule {
  /** Mode bits no one but the owner may hold. */
  forbidden: number;
  /** The most names the file may have. */
  links: number;
  /** What the operator can do, for the error line. */
  fix: string;
}

/**
 * A journal, snapshot or temporary file: no one else may change it (group or other write bit, a
 * second name elsewhere) or have made it. Read bits are the owner's business: a backup restored
 * as 0644 is still ours alone to change.
 */
export const DATA_FILE: FileRule = {
  forbidden: 0o022,
  links: 1,
  fix: 'it may have been planted, so nothing was changed; if it is genuine, replace it with a copy this user makes (cp, chmod 600, mv over it)',
};

/**
 * The LOCK: a process taking it links its temp file to `LOCK` and then unlinks the temp file
 * (lock.ts), so a reader can meet it with two names for a moment. The store only reads and
 * removes a LOCK, never writes into one another name could read.
 */
export const LOCK_FILE_RULE: FileRule = { ...DATA_FILE, links: 2 };

/** The user the service runs as; undefined where the platform has no uids (Windows). */
export function serviceUid(): number | undefined {
  return process.getuid?.();
}

/** Why `status` is not a file the service may trust under `rule`, or undefined when it is one. */
export function untrustedBecause(status: FileStatus, rule: FileRule): string | undefined {
  const uid = serviceUid();
  if (!status.isFile()) return 'is not a regular file';
  if (uid !== undefined && status.uid !== uid) return `belongs to uid ${status.uid}, not to this service's user (uid ${uid})`;
  if (status.nlink > rule.links) return `has ${status.nlink} links: it can be read or changed through another name`;
  const open = status.mode & rule.forbidden;
  if (open !== 0) return `is ${(open & 0o022) !== 0 ? 'writable' : 'readable'} by other users (mode ${(status.mode & 0o7777).toString(8)})`;
  return undefined;
}

/** The flags that create a file that must not exist yet (O_EXCL). */
const CREATES_NEW: ReadonlySet<OpenFlags> = new Set(['ax', 'wx']);

/**
 * Opens a data file (created with FILE_MODE where `flags` create) and checks what fstat says of
 * the descriptor, not of the name: a name checked and then opened can be swapped in between.
 * A file that is not the service's own is closed unread and refused with DataNotPrivateError.
 */
export async function openDataFile(fs: FileLayer, path: string, flags: OpenFlags, rule: FileRule = DATA_FILE): Promise<FileHandleLike> {
  const handle = await fs.open(path, flags, FILE_MODE).catch((err: unknown) => {
    // Another user's file that this one may not open (0600, say): refused as the fstat check would
    // refuse it, not as a bare EACCES. A file created here (`ax`, `wx`) exists nowhere yet: its
    // EACCES is the directory's, and is reported as it is.
    if ((err as NodeJS.ErrnoException).code !== 'EACCES' || CREATES_NEW.has(flags)) throw err;
    throw new DataNotPrivateError(path, `cannot be opened by this service's user (uid ${serviceUid() ?? '?'}): another user's file, or one it may not read`, rule.fix);
  });
  try {
    const problem = untrustedBecause(await handle.stat(), rule);
    if (problem !== undefined) throw new DataNotPrivateError(path, problem, rule.fix);
  } catch (err) {
    await handle.close().catch(() => {});
    throw err;
  }
  return handle;
}

/** The whole of a data file, once openDataFile has checked it. */
export async function readDataFile(fs: FileLayer, path: string, rule: FileRule = DATA_FILE): Promise<Buffer> {
  const handle = await openDataFile(fs, path, 'r', rule);
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}
