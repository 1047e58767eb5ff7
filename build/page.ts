/**
 * Lays the built-in page out in dist/public/ as GET /ui/{version}/{file} serves it: one folder,
 * each file by its name. `tsc -p src/ui/page` compiles the page together with the modules of src/
 * it imports (src/model/valid-book.ts, the one rule for a valid book) into dist/page-build/, in the
 * folders of src/. From the page's main.js this follows the relative imports, copies each module
 * reached into dist/public/ and points its imports at the copies (`../../model/valid-book.js`
 * becomes `./valid-book.js`); what no import reaches (a type-only import's module) stays out. Then
 * the page's template, style and icon are copied beside them, and dist/page-build/ is removed.
 * Run by `npm run build`, after tsc.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'src/ui/page');
const STAGED = join(ROOT, 'dist/page-build');
const PUBLIC = join(ROOT, 'dist/public');
const ENTRY = join(STAGED, 'ui/page/main.js');

/** `from './x.js'`, `import './x.js'`, `export … from '../y.js'`: tsc's output names its imports so. */
const RELATIVE_IMPORT = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.\.?\/[^'"]+)\2/g;

function fail(message: string): never {
  process.stderr.write(`build/page.ts: ${message}\n`);
  process.exit(1);
}

const placed = new Map<string, string>(); // flat name → the module it holds
const pending = [ENTRY];
while (pending.length > 0) {
  const file = pending.pop() as string;
  const name = basename(file);
  if (placed.get(name) === file) continue;
  if (placed.has(name)) fail(`${relative(STAGED, file)} and ${relative(STAGED, placed.get(name) as string)} would both be ${name} in dist/public/: rename one`);
  placed.set(name, file);
  const code = readFileSync(file, 'utf8').replace(RELATIVE_IMPORT, (_, keyword: string, quote: string, specifier: string) => {
    const target = resolve(dirname(file), specifier);
    pending.push(target);
    return `${keyword}${quote}./${basename(target)}${quote}`;
  });
  mkdirSync(PUBLIC, { recursive: true });
  writeFileSync(join(PUBLIC, name), code);
}

for (const name of readdirSync(SOURCE)) {
  if (!/\.(ts|json)$/.test(name)) copyFileSync(join(SOURCE, name), join(PUBLIC, name));
}
rmSync(STAGED, { recursive: true, force: true });
