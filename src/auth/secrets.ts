import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { DataNotPrivateError } from '../faults.ts';
import { readDataFile, type FileRule } from '../fs/data-file.ts';
import { isNotFound, nodeFileLayer, writeAtomic, type FileLayer } from '../fs/durable-fs.ts';

export const SECRET_FILE = 'secret-token';
export const PASSWORD_FILE = 'auth-password';

export interface StoredSecret {
  value: string;
  /** True when this call generated the value (first start). */
  created: boolean;
  path: string;
}

/**
 * Reads a generated secret from the data directory, or makes one from `bytes` random bytes and
 * keeps it there with mode 0600 (docs/contract.md, "Configuration": no hard-coded secret, ever). The value is the
 * base64url text, used exactly as if it had been set in the environment. Written like the
 * catalogue (temp, fsync, rename, fsync of the directory): after a power loss the file is there
 * whole, so a password already printed is never silently replaced by a new one.
 */
export async function loadOrCreateSecret(dir: string, name: string, bytes: number, fs: FileLayer = nodeFileLayer): Promise<StoredSecret> {
  const path = join(dir, name);
  try {
    const value = (await readSecret(fs, path)).toString('utf8').trim();
    if (value !== '') return { value, created: false, path };
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  const value = randomBytes(bytes).toString('base64url');
  await writeAtomic(fs, path, (write) => write(Buffer.from(`${value}\n`, 'utf8')));
  return { value, created: true, path };
}

/**
 * A secret file anyone else could have written (or read) is no secret: one planted in the data
 * directory would sign tokens an attacker made. Refused unless it is a regular file (not a
 * symlink out of the directory), of this process's user, with one name, readable and writable by
 * it alone.
 */
const SECRET_FILE_RULE: FileRule = {
  forbidden: 0o077,
  links: 1,
  fix: 'make it a file of this user with one link and mode 0600, or remove it to have a new one generated',
};

function readSecret(fs: FileLayer, path: string): Promise<Buffer> {
  return readDataFile(fs, path, SECRET_FILE_RULE).catch((err: unknown) => {
    // O_NOFOLLOW refuses a symlink with ELOOP, which says nothing to an operator.
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new DataNotPrivateError(path, 'is a symlink, not a regular file', SECRET_FILE_RULE.fix);
    throw err;
  });
}
