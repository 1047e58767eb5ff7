import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

describe('BookIndex keyset pages over ids far apart', () => {
  it('a page starts at the next book however many ids lie between: 1 and 2^53 − 2, in a bounded time', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./fixtures/sparse-keyset.ts', import.meta.url))], { timeout: 20_000 });
    const { stdout } = await run.catch((err: { killed?: boolean }) => {
      throw new Error(err.killed === true ? 'booksAfter did not return within 20 s: it walks the ids between the books' : String(err));
    });
    const high = Number.MAX_SAFE_INTEGER - 1;
    assert.deepEqual(JSON.parse(stdout), [[[1], true], [[high], false], [[], false], [[1, high], false]]);
  });
});
