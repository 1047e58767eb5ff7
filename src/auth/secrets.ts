import { randomBytes } from 'node:crypto';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';

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
 * keeps it there with mode 0600 (decisions.md: no hard-coded secret, ever). The value is the
 * base64url text, used exactly as if it had been set in the environment.
 */
export async function loadOrCreateSecret(dir: string, name: string, bytes: number): Promise<StoredSecret> {
  const path = join(dir, name);
  try {
    const value = (await readFile(path, 'utf8')).trim();
    if (value !== '') return { value, created: false, path };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const value = randomBytes(bytes).toString('base64url');
  const handle = await open(path, 'w', 0o600);
  try {
    await handle.writeFile(`${value}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { value, created: true, path };
}
