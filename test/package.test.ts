import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { exerciseEmbeddingExample, INSTALLED_EXAMPLE } from './helpers/embedding.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function runForOutput(command: string, args: readonly string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: { ...process.env, npm_config_update_notifier: 'false' } }, (err, stdout, stderr) =>
      err === null ? resolve({ stdout, stderr }) : reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || err.message}`)),
    );
  });
}

async function run(command: string, args: readonly string[], cwd: string): Promise<string> {
  return (await runForOutput(command, args, cwd)).stdout;
}

/** Regular files of a .tgz (ustar, as npm writes it): path → bytes. */
function tarFiles(tgz: Buffer): Map<string, Buffer> {
  const tar = gunzipSync(tgz);
  const files = new Map<string, Buffer>();
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number): string => header.subarray(start, start + length).toString('utf8').replace(/\0[^]*$/, '');
    const prefix = field(345, 155);
    const name = prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`;
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    if (field(156, 1) === '0' || field(156, 1) === '') files.set(name, tar.subarray(offset + 512, offset + 512 + size));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

describe('the package: npm pack, then an offline install into a fresh project', () => {
  const temp = tempDirs('book-catalogue-pack-');
  let work: string;
  let tarball: string;
  let project: string;
  let installWarnings: string;
  before(async () => {
    work = await temp.make();
    // dist/ is already built (pretest); rebuilding here would race the other test files using it.
    const packed = JSON.parse(await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT)) as { filename: string }[];
    tarball = join(work, (packed[0] as { filename: string }).filename);
    project = join(work, 'project');
    await mkdir(project);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
    installWarnings = (await runForOutput(NPM, ['install', '--offline', '--no-audit', '--no-fund', '--cache', join(work, 'npm-cache'), tarball], project)).stderr;
  });
  after(() => temp.removeAll());

  it('the tarball holds dist/ with a declaration per module and the bin with its shebang, and nothing from test/, data/ or .env', async () => {
    const files = tarFiles(await readFile(tarball));
    const paths = [...files.keys()].map((p) => p.replace(/^package\//, ''));
    for (const required of ['package.json', 'README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/main.js', 'docs/book-catalogue.service', 'dist/public/index.html', 'dist/public/main.js', 'dist/public/style.css']) {
      assert.ok(paths.includes(required), required);
    }
    // dist/public holds the built-in page's browser scripts: nothing imports them from Node.
    for (const js of paths.filter((p) => p.endsWith('.js') && !p.startsWith('dist/public/'))) assert.ok(paths.includes(js.replace(/\.js$/, '.d.ts')), `declarations for ${js}`);
    assert.match(files.get('package/dist/main.js')?.toString('utf8') ?? '', /^#!\/usr\/bin\/env node\n/);
    const stray = paths.filter((p) => /^(test|data|src|bench|fuzz|node_modules)\/|(^|\/)\.env|\.tgz$/.test(p));
    assert.deepEqual(stray, []);
  });

  it('package.json: exports with types first, the bin, engines, no dependencies, no install scripts', async () => {
    const pkg = JSON.parse(await readFile(join(project, 'node_modules/book-catalogue/package.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(pkg.exports?.['.'] as object), ['types', 'default']);
    assert.deepEqual(pkg.bin, { 'book-catalogue': 'dist/main.js' });
    assert.match(String(pkg.engines?.node), /^>=20/);
    assert.equal(pkg.dependencies, undefined);
    for (const hook of ['preinstall', 'install', 'postinstall']) assert.equal(pkg.scripts?.[hook], undefined, hook);
    assert.deepEqual((await readdir(join(project, 'node_modules'))).filter((n) => !n.startsWith('.')), ['book-catalogue'], 'nothing else was installed');
  });

  it('every package npm warns about for install scripts is one the README explains (npm 11 lists the prepare it does not run for a tarball)', async () => {
    const named = [...installWarnings.matchAll(/^npm warn install-scripts {2,}(\S+@\S+ \(.+\))$/gm)].map((m) => m[1] as string);
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    assert.deepEqual(
      named.filter((entry) => !readme.includes(`\`${entry}\``)),
      [],
      installWarnings,
    );
  });

  it('the bin is linked and executable after install', async () => {
    const mode = (await stat(join(project, 'node_modules/book-catalogue/dist/main.js'))).mode;
    assert.ok((mode & 0o111) !== 0, `mode ${mode.toString(8)}`);
    assert.ok((await stat(join(project, 'node_modules/.bin/book-catalogue'))).isFile());
  });

  it('(a) the embedding example of docs/embedding.md runs from the installed package with plain node, mounts createApp and serves requests', async () => {
    const stdout = await exerciseEmbeddingExample(process.execPath, [INSTALLED_EXAMPLE], project, join(work, 'embedded-data'));
    assert.match(stdout, /^catalogue at http:\/\/127\.0\.0\.1:\d+\/catalogue\n$/);
  });

  it('(a) a copy of the embedding example in the project type-checks against the installed declarations (it imports the package by its name)', async () => {
    await copyFile(join(project, INSTALLED_EXAMPLE), join(project, 'embedding-example.mjs'));
    const tsconfig = {
      compilerOptions: { module: 'nodenext', target: 'es2023', lib: ['es2023'], strict: true, allowJs: true, checkJs: true, noEmit: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules/@types')] },
      files: ['embedding-example.mjs'],
    };
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
    await run(join(ROOT, 'node_modules/.bin/tsc'), ['-p', '.'], project);
  });

  it('(a) the installed library has no side effects when imported and used', async () => {
    await copyFile(join(ROOT, 'test/fixtures/library-side-effects.mjs'), join(project, 'side-effects.mjs'));
    const record = JSON.parse(await run(process.execPath, ['side-effects.mjs'], project)) as unknown;
    assert.deepEqual(record, { status: 200, envReads: [], listenersAdded: [], writes: 0, exitCalls: 0 });
  });

  it('(b) the book-catalogue bin runs through its shebang: --version, import, export', async () => {
    const bin = join(project, 'node_modules/.bin/book-catalogue');
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(await run(bin, ['--version'], project), `${version}\n`);
    await writeFile(join(work, 'backup.json'), '[{"id":4,"title":"Emma","author":"Jane Austen","year":1815}]');
    await run(bin, ['import', join(work, 'backup.json'), '--data-dir', join(work, 'bin-data')], project);
    assert.deepEqual(JSON.parse(await run(bin, ['export', '--data-dir', join(work, 'bin-data')], project)), [{ id: 4, title: 'Emma', author: 'Jane Austen', year: 1815 }]);
  });
});
