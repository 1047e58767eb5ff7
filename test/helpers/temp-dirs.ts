import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the system's temporary folder; the caller removes it. */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Fresh temporary directories for one test file, all removed by `removeAll` (call it in `after`). */
export function tempDirs(prefix: string): { make: () => Promise<string>; removeAll: () => Promise<void> } {
  const dirs: string[] = [];
  return {
    async make() {
      const dir = await tempDir(prefix);
      dirs.push(dir);
      return dir;
    },
    async removeAll() {
      await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}
