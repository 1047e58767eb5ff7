import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** The paths `npm pack` would put in the tarball (`npm pack --dry-run --json`). */
function packedPaths(): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      NPM,
      ['pack', '--dry-run', '--json', '--ignore-scripts'],
      { cwd: ROOT, env: { ...process.env, npm_config_update_notifier: 'false' } },
      (err, stdout, stderr) => {
        if (err !== null) return reject(new Error(`npm pack --dry-run failed: ${stderr || err.message}`));
        resolve(((JSON.parse(stdout) as { files: { path: string }[] }[])[0]?.files ?? []).map((f) => f.path));
      },
    );
  });
}

/**
 * Files a Markdown document points a reader to: relative links (`[x](SECURITY.md#y)`) and paths
 * named in code spans (`docs/embedding-example.mjs`), resolved against the document's folder.
 */
function referencedFiles(markdown: string, from: string): string[] {
  const links = [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] as string).filter((t) => !/^([a-z]+:|#)/i.test(t));
  const named = [...markdown.matchAll(/`((?:docs|dist)\/[\w./-]+\.\w+|[A-Z]+\.md)`/g)].map((m) => m[1] as string);
  return [...new Set([...links.map((t) => normalize(join(dirname(from), t.replace(/#.*$/, '')))), ...named])];
}

describe('npm pack --dry-run: what the tarball holds', () => {
  let paths: string[];
  before(async () => {
    paths = await packedPaths();
  });

  it('LICENSE is there, and it is the MIT licence package.json names', async () => {
    assert.ok(paths.includes('LICENSE'));
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { license: string };
    assert.equal(pkg.license, 'MIT');
    assert.match(await readFile(join(ROOT, 'LICENSE'), 'utf8'), /^MIT License\n/);
  });

  it('every file the packed Markdown links to or names is in the tarball', async () => {
    const documents = paths.filter((p) => p.endsWith('.md'));
    assert.ok(documents.includes('README.md') && documents.includes('SECURITY.md'), documents.join(', '));
    const missing: string[] = [];
    for (const doc of documents) {
      for (const target of referencedFiles(await readFile(join(ROOT, doc), 'utf8'), doc)) {
        if (!paths.includes(target)) missing.push(`${doc} → ${target}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('no source map, and no sourceMappingURL pointing at a file that is not there', async () => {
    assert.deepEqual(
      paths.filter((p) => p.endsWith('.map')),
      [],
    );
    const dangling: string[] = [];
    for (const file of paths.filter((p) => /\.(js|d\.ts)$/.test(p))) {
      const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(await readFile(join(ROOT, file), 'utf8'))?.[1];
      if (url !== undefined && !paths.includes(normalize(join(dirname(file), url)))) dangling.push(`${file} → ${url}`);
    }
    assert.deepEqual(dangling, []);
  });

  it('reads links the way a reader follows them', () => {
    assert.deepEqual(referencedFiles('see [S](SECURITY.md#limits), [c](docs/contract.md), [w](https://x.y/z.md), [a](#top), `docs/embedding-example.mjs`', 'README.md'), [
      'SECURITY.md',
      'docs/contract.md',
      'docs/embedding-example.mjs',
    ]);
    assert.deepEqual(referencedFiles('[up](../README.md)', 'docs/contract.md'), ['README.md']);
  });
});
