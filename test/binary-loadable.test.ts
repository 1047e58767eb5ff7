import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import { join, posix } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { seaAssets } from '../binary/build-binary.ts';
import { UI_FOLDER } from '../src/ui/assets.ts';

/**
 * The single executable's main script (src/sea/entry.ts) serves dist/'s modules from its assets: a
 * relative import, or a built-in module by name. Anything else that works from dist/ would break
 * only in the binary; this finds it without building one (test/binary.test.ts runs the binary).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The specifiers a compiled module imports: static, re-exported, bare side-effect, and dynamic (whatever its argument). */
const IMPORTS = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|\bimport\s*\(\s*([^)]*?)\s*\)/g;

/**
 * Modules whose dynamic imports leave the executable on purpose, and why: the binary serves the
 * file store, and STORE_URL there stops startup with the line naming the package (docs/binary.md).
 */
const LEAVES_THE_EXECUTABLE = new Map([['dist/cli/store-package.js', 'the PostgreSQL store is a package of its own, installed beside the core, never inside the executable']]);

describe('dist/ holds only what the single executable can load from its assets', () => {
  it('each module imports built-in modules by name and its own by a relative path to a file the binary carries', async () => {
    const assets = await seaAssets(ROOT);
    const modules = [...assets.keys()].filter((key) => key.endsWith('.js') && !key.startsWith(UI_FOLDER));
    assert.ok(modules.includes('dist/main.js') && modules.length > 50, modules.join(', '));
    const wrong: string[] = [];
    for (const key of modules) {
      for (const m of (await readFile(join(ROOT, key), 'utf8')).matchAll(IMPORTS)) {
        const specifier = m[1] ?? m[2] ?? m[3] ?? '';
        if (m[3] !== undefined && LEAVES_THE_EXECUTABLE.has(key)) continue;
        if (m[3] !== undefined && !/^'[^']*'$/.test(specifier)) wrong.push(`${key}: import(${specifier}) names no fixed module`);
        const name = m[3] === undefined ? specifier : specifier.slice(1, -1);
        if (isBuiltin(name)) continue;
        if (/^\.\.?\//.test(name) && assets.has(posix.join(posix.dirname(key), name))) continue;
        wrong.push(`${key}: ${name}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('only src/package-files.ts looks at where its module lives (import.meta), and nothing uses CommonJS names', async () => {
    const found: string[] = [];
    for (const key of (await seaAssets(ROOT)).keys()) {
      if (!key.endsWith('.js') || key.startsWith(UI_FOLDER)) continue;
      const text = await readFile(join(ROOT, key), 'utf8');
      for (const m of text.matchAll(/\bimport\.meta\b|\brequire\s*\(|\bcreateRequire\b|\b__dirname\b|\b__filename\b/g)) {
        if (!(key === 'dist/package-files.js' && m[0] === 'import.meta')) found.push(`${key}: ${m[0]}`);
      }
    }
    assert.deepEqual(found, []);
  });

  it('the scan sees what it must refuse', () => {
    const seen = (text: string): string[] => [...text.matchAll(IMPORTS)].map((m) => m[1] ?? m[2] ?? m[3] ?? '');
    assert.deepEqual(seen(`import { a } from './a.js';\nexport * from "../b.js";\nimport 'pkg';\nconst c = await import(name);\nimport('./d.js');`), ['./a.js', '../b.js', 'pkg', 'name', "'./d.js'"]);
  });
});
