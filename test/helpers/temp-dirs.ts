import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Fresh temporary directories for one test file, all removed by `removeAll` (call it in `after`). */
export function tempDirs(prefix: string): { make: () => Promise<string>; removeAll: () => Promise<void> } {
  const dirs: string[] = [];
  return {
    async make() {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    async removeAll() {
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}
