import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';

/*
 * What every test needs from the file system and from JWTs is written once, in test/helpers/: a
 * temporary directory comes from temp-dirs.ts (so it is removed), a hand-signed token from
 * token.ts (node:crypto alone, independent of src/auth/jwt.ts). A test file that builds its own
 * copy would drift from them; this test names it.
 */
const RULES: { what: string; pattern: RegExp; helper: string }[] = [
  { what: 'makes its own temporary directory', pattern: /\bmkdtemp(Sync)?\(/, helper: 'helpers/temp-dirs.ts' },
  { what: 'signs its own token with createHmac', pattern: /\bcreateHmac\(/, helper: 'helpers/token.ts' },
];

describe('test files use the shared helpers', () => {
  it('no test file makes its own temporary directory or hand-signs its own token', async () => {
    const dir = new URL('./', import.meta.url);
    const self = new URL(import.meta.url).pathname.split('/').at(-1);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.test.ts') && f !== self);
    assert.ok(files.length > 50, `${files.length} test files found`);
    const found: string[] = [];
    for (const file of files) {
      const text = await readFile(new URL(file, dir), 'utf8');
      for (const rule of RULES) if (rule.pattern.test(text)) found.push(`${file} ${rule.what}: use ${rule.helper}`);
    }
    assert.deepEqual(found, []);
  });
});
