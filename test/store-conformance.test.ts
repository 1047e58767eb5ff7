import { rm } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { storeConformance } from '../src/conformance.ts';
import { openStore } from '../src/index.ts';
import { tempDir } from './helpers/temp-dirs.ts';

// The file store against the store contract every store passes (packages/store-postgres runs it too).
storeConformance(
  'file store',
  {
    shared: false,
    async catalogue() {
      const dir = await tempDir('book-catalogue-conformance-');
      return {
        open: () => openStore(dir),
        opener: { module: new URL('./fixtures/open-file-store.ts', import.meta.url).href, arg: dir, execArgv: ['--import', 'tsx'] },
        remove: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  { describe, it },
);
