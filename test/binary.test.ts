import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BuilderUnavailableError, buildBinary, findBuilder, type Builder } from '../binary/build-binary.ts';
import { loadUiAssets, UI_FOLDER } from '../src/ui/assets.ts';
import { packageVersion } from '../src/version.ts';
import { launchBrowser } from './helpers/browser.ts';
import { loginToken } from './helpers/login.ts';
import { killAll, metricsPortOf, outputMatching, runMain, startMain, type Exit, type RunningService } from './helpers/process.ts';
import { fences, isSkipped, matchesShown, runnable } from './helpers/readme-blocks.ts';
import { findTool, needs } from './helpers/system-tools.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { within } from './helpers/wait.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Where `npm run build:binary` puts it: a binary built from this very dist/ (by an earlier run of the suite on another Node line, say) is used as it is. */
const OUT_DIR = join(ROOT, 'dist-bin');
/** Where the browser's picture of the page the binary serves is kept, for a person to look at (git-ignored). */
const SCREENSHOT = fileURLToPath(new URL('../test-results/binary-page.png', import.meta.url));
const temp = tempDirs('book-catalogue-binary-');

after(async () => {
  await killAll();
  await temp.removeAll();
});

/** `npm run build:binary` without the `npm run build` in front of it, which would rebuild the dist/ the suite is using. */
function buildScript(args: readonly string[]): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'binary/build.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

describe('npm run build:binary: its flags', () => {
  it('--executable without --target (or the reverse) says they go together and exits 2, building nothing', async () => {
    for (const args of [['--executable', '/usr/bin/node'], ['--target', 'linux-arm64']]) {
      const run = await buildScript(args);
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /^--executable and --target go together\n\nnpm run build:binary /);
    }
    const unknown = await buildScript(['--no-such-flag']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^Unknown option '--no-such-flag'/);
  });
});

/**
 * node@26 builds the binary. A host that cannot reach the npm registry skips the checks below,
 * saying why and how to run them; any other failure to find it fails them.
 */
async function builderOrReason(): Promise<Builder | Error | string> {
  if (`${process.platform}-${process.arch}` !== 'linux-x64') return `the single executable is checked on linux-x64 (docs/binary.md names that build), not ${process.platform}-${process.arch}`;
  try {
    return await findBuilder();
  } catch (err) {
    if (!(err instanceof BuilderUnavailableError)) return err as Error;
    return `needs node@26 from the npm registry to build the binary (${err.message}); with the registry reachable, run npm test again`;
  }
}

const builder = await builderOrReason();

/** One run of the binary (empty environment) and of `node dist/main.js` with the same arguments. */
async function both(binary: string, args: string[], cwd: string): Promise<{ binary: Exit; node: Exit }> {
  const [fromBinary, fromNode] = await Promise.all([runMain({ binary, args, cwd, env: {} }), runMain({ args, cwd })]);
  return { binary: fromBinary, node: fromNode };
}

/** What varies between two first starts: passwords, directories, ports, times and pids. */
function normalized(text: string, cwd: string): string {
  return text
    .replaceAll(cwd, '<cwd>')
    .replace(/("admin": )\S+/, '$1<password>')
    .replace(/"time":\d+,"pid":\d+/g, '"time":<time>,"pid":<pid>')
    .replace(/(127\.0\.0\.1:|"port":|"metricsPort":)\d+/g, '$1<port>');
}

const ENV_FILE = 'METRICS_PORT=0\n';

describe('the single executable (npm run build:binary)', { skip: typeof builder === 'string' ? builder : false }, () => {
  const node26 = builder as Builder;
  let binary: string;
  /** Whether this run built the binary, rather than finding it built from the same dist/ and Node. */
  let builtNow: boolean;
  let cwd: string;
  let service: RunningService;
  let token: string;

  before(async () => {
    if (builder instanceof Error) throw builder;
    ({ file: binary, built: builtNow } = await buildBinary({ root: ROOT, outDir: OUT_DIR, builder: node26 }));
    cwd = await temp.make();
    // The environment stays empty: the metrics port comes from .env, which the binary reads like node dist/main.js.
    await writeFile(join(cwd, '.env'), ENV_FILE);
    service = await startMain({ binary, cwd, env: {}, args: ['--port', '0', '--host', '127.0.0.1'] });
    await outputMatching(service, 'stderr', /use your own\.\n\n$/);
  });

  it('the build script says the binary is up to date when dist/ and Node are what it was built from', async () => {
    const run = await buildScript([]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`^up to date: dist-bin/book-catalogue-linux-x64 \\(1\\d\\d MB, Node ${node26.version.replaceAll('.', '\\.')}\\)\n$`));
  });

  it('--version, --help and usage errors: the same output and exit code as node dist/main.js', async () => {
    const dir = await temp.make();
    const rows = [['--version'], ['-v'], ['--help'], ['export', '--help'], ['--no-such-flag'], ['--port', '70000'], ['import'], ['export', '--data-dir', 'no-such-dir']];
    for (const args of rows) {
      const run = await both(binary, args, dir);
      assert.deepEqual(run.binary, run.node, args.join(' '));
    }
    assert.equal((await both(binary, ['--version'], dir)).binary.stdout, `${packageVersion()}\n`);
  });

  it('first start, with an empty environment: the password notice and the startup lines of node dist/main.js, nothing else', async () => {
    const other = await temp.make();
    await writeFile(join(other, '.env'), ENV_FILE);
    const fromNode = await startMain({ cwd: other, args: ['--port', '0', '--host', '127.0.0.1'] });
    await outputMatching(fromNode, 'stderr', /use your own\.\n\n$/);
    const nodeOutput = fromNode.output();
    assert.equal((await fromNode.stop()).code, 0);
    const binaryOutput = service.output();
    // Up to the listening line: what follows are request lines, which differ with the checks that ran first.
    const startup = (stdout: string): string => stdout.slice(0, stdout.indexOf('\n', stdout.indexOf('"msg":"listening on')) + 1);
    assert.equal(normalized(binaryOutput.stderr, cwd), normalized(nodeOutput.stderr, other));
    assert.equal(normalized(startup(binaryOutput.stdout), cwd), normalized(startup(nodeOutput.stdout), other));
    assert.equal(startup(binaryOutput.stdout).split('\n').length, 3, 'the metrics line and the listening line');
    assert.doesNotMatch(binaryOutput.stderr, /Warning/);
  });

  it('the README walk-through over HTTP: token, create, list, get, update, delete', async () => {
    const password = (await readFile(join(cwd, 'data', 'auth-password'), 'utf8')).trim();
    const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
      const res = await fetch(`${service.url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', authorization: token },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
      return res.json();
    };
    token = await loginToken(service.url, password);
    const dune = { id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 };
    assert.deepEqual(await call('POST', '/book', { title: 'Dune', author: 'Frank Herbert', year: 1965 }), { status: 201, message: 'Book created successfully', data: dune });
    assert.deepEqual(await call('GET', '/books'), { status: 200, message: 'Books retrieved successfully', data: [dune] });
    assert.deepEqual(await call('GET', '/book/1'), { status: 200, message: 'Book retrieved successfully', data: dune });
    assert.deepEqual(await call('PUT', '/book/1', { year: 1966 }), { status: 200, message: 'Book updated successfully', data: { ...dune, year: 1966 } });
    assert.deepEqual(await call('DELETE', '/book/1'), { status: 200, message: 'Book deleted successfully', data: null });
    assert.deepEqual(await call('GET', '/book/1'), { status: 404, message: 'Book not found', data: null });
  });

  it('the page at / and each of its assets: the bytes of dist/public', async () => {
    const built = loadUiAssets();
    const page = await fetch(`${service.url}/`);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.ok(Buffer.from(await page.arrayBuffer()).equals(built.page.body), 'the page names the same asset version as dist/public gives');
    assert.ok(built.files.size >= 4, [...built.files.keys()].join(', '));
    for (const [name, file] of built.files) {
      const res = await fetch(`${service.url}/ui/${built.version}/${name}`);
      assert.equal(res.status, 200, name);
      assert.equal(res.headers.get('content-type'), file.contentType, name);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(await readFile(join(ROOT, UI_FOLDER, name))), `${name} is the file in dist/public`);
    }
  });

  it('the page signs in and shows the catalogue in Debian chromium (a screenshot is kept in test-results/)', needs('chromium'), async () => {
    const password = (await readFile(join(cwd, 'data', 'auth-password'), 'utf8')).trim();
    for (const title of ['Emma', 'Persuasion']) {
      const res = await fetch(`${service.url}/book`, { method: 'POST', headers: { authorization: token }, body: JSON.stringify({ title, author: 'Jane Austen', year: 1815 }) });
      assert.equal(res.status, 201);
    }
    const browser = await launchBrowser(findTool('chromium') as string);
    try {
      const page = await browser.newPage();
      await page.setViewport(1100, 700);
      await page.goto(`${service.url}/`);
      await page.waitFor(`document.getElementById('signin-dialog').open`);
      await page.fill('#username', 'admin');
      await page.fill('#password', password);
      await page.press('Enter');
      await page.waitFor(`!document.getElementById('signin-dialog').open && document.querySelectorAll('#rows tr').length === 2`);
      assert.deepEqual(await page.evaluate(`[...document.querySelectorAll('#rows tr td:nth-child(2)')].map((td) => td.textContent)`), ['Emma', 'Persuasion']);
      mkdirSync(join(SCREENSHOT, '..'), { recursive: true });
      await page.screenshot(SCREENSHOT);
      assert.deepEqual(page.record.errors, []);
      assert.ok((await readFile(SCREENSHOT)).subarray(1, 4).toString('latin1') === 'PNG');
    } finally {
      await browser.close();
    }
  });

  it('/metrics on METRICS_PORT, naming the package version and the Node inside', async () => {
    const metricsPort = metricsPortOf(service);
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, new RegExp(`^book_catalogue_build_info\\{version="${packageVersion()}",node="${node26.version}"\\} 1$`, 'm'));
    assert.match(text, /^book_catalogue_books \d+$/m);
  });

  it('import, then export: the books come back byte for byte as node dist/main.js exports them', async () => {
    const dir = await temp.make();
    const books = [
      { id: 3, title: 'Zoë’s garden 🌱', author: 'Émile', year: -44 },
      { id: 10, title: 'Dune', author: 'Frank Herbert', year: 1965 },
    ];
    await writeFile(join(dir, 'books.json'), JSON.stringify(books));
    const imported = await runMain({ binary, cwd: dir, env: {}, args: ['import', 'books.json', '--data-dir', 'restored'] });
    assert.deepEqual({ code: imported.code, stdout: imported.stdout, stderr: imported.stderr }, { code: 0, stdout: '', stderr: `book-catalogue: imported 2 books into ${join(dir, 'restored')}\n` });
    const exported = await both(binary, ['export', '--data-dir', 'restored'], dir);
    assert.deepEqual(exported.binary, exported.node);
    assert.equal(exported.binary.code, 0);
    assert.deepEqual(JSON.parse(exported.binary.stdout), books);
    // Safe while the service runs: export of the data directory the binary is serving.
    const live = await runMain({ binary, cwd, env: {}, args: ['export'] });
    assert.equal(live.code, 0, live.stderr);
    assert.ok(Array.isArray(JSON.parse(live.stdout)));
  });

  it("docs/binary.md's examples run as shown", async () => {
    const dir = await temp.make();
    await symlink(OUT_DIR, join(dir, 'dist-bin'));
    const doc = await readFile(join(ROOT, 'docs', 'binary.md'), 'utf8');
    const blocks = fences(doc).filter((f) => f.lang === 'sh' && !isSkipped(f));
    assert.ok(blocks.length > 0);
    for (const fence of blocks) {
      const block = runnable(fence, (g) => `printf '\\x1e%s\\x1e' ${g}`);
      const script = ['set -e', 'exec 2>&1', ...block.lines.map((l) => l.text)].join('\n');
      const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
        const child = spawn('bash', ['-c', script], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
        let text = '';
        child.stdout.setEncoding('utf8').on('data', (s: string) => (text += s));
        child.on('close', (code) => resolve({ code, text }));
      });
      assert.equal(out.code, 0, `docs/binary.md line ${block.line}: ${out.text}`);
      // Output group g is what was printed between marker g-1 (or the start) and marker g.
      const parts = out.text.split(/\x1e\d+\x1e/);
      block.outputs.forEach((group, g) => {
        assert.ok(matchesShown(group.expected, parts[g] as string), `docs/binary.md line ${group.line}: shown\n${group.expected.join('\n')}\nprinted\n${parts[g]}`);
      });
    }
  });

  it('--executable is what the application goes into: a file that is no executable fails the build and leaves nothing', async () => {
    const outDir = await temp.make();
    const notNode = join(outDir, 'not-node');
    await writeFile(notNode, 'not an executable\n');
    await assert.rejects(buildBinary({ root: ROOT, outDir, builder: node26, executable: notNode, target: 'linux-x64' }), /Executable must be a supported format/);
    assert.deepEqual(await readdir(outDir), ['not-node']);
  });

  it('--executable: another node binary of the same version is used as given, and the file is named for --target', async (t) => {
    // A second 150 MB build, never reused: made once per dist/ and Node, not again by the runs on the other Node lines.
    if (!builtNow) return t.skip('checked by the run that builds the binary; this one found it built from the same dist/ and Node');
    const outDir = await temp.make();
    const other = await buildBinary({ root: ROOT, outDir, builder: node26, executable: node26.execPath, target: 'linux-x64-copy' });
    assert.deepEqual(other, { file: join(outDir, 'book-catalogue-linux-x64-copy'), built: true });
    const run = await runMain({ binary: other.file, cwd: outDir, env: {}, args: ['--version'] });
    assert.deepEqual([run.code, run.stdout, run.stderr], [0, `${packageVersion()}\n`, '']);
  });

  it('SIGTERM: the request in flight is answered, then the binary exits 0 having stopped cleanly', async () => {
    const body = JSON.stringify({ title: 'Sent after SIGTERM', author: 'A', year: 2000 });
    const socket = connect(service.port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('latin1').on('data', (s: string) => (answer += s));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.write(`POST /book HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${body.length}\r\n\r\n`);
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (answer.includes(' 100 Continue')) resolve();
        else socket.once('data', check);
      };
      check();
    });
    service.child.kill('SIGTERM');
    await outputMatching(service, 'stdout', /"msg":"SIGTERM received: finishing requests in flight, then exiting"/);
    socket.write(body);
    await ended;
    assert.match(answer, /\r\nHTTP\/1\.1 201 Created\r\n/);
    assert.match(answer, /\r\nconnection: close\r\n/i);
    const exit = await within('the binary exiting once the answer in flight is out', service.exited);
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /"msg":"stopped cleanly"}\n$/);
    assert.doesNotMatch(exit.stderr, /Warning/);
    assert.deepEqual((await readdir(cwd)).sort(), ['.env', 'data'], 'nothing unpacked beside the data directory');
  });
});
