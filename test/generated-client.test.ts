import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_PASSWORD, TEST_USER, type TestApp } from './helpers/app.ts';
import { UNREACHABLE } from './helpers/npm-tools.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/**
 * The generator and the client library a TypeScript user would pick, fetched from the registry at
 * test time into a cache of their own (never devDependencies) and reused by later runs.
 */
const PINS = { 'openapi-typescript': '7.13.0', 'openapi-fetch': '0.17.0' } as const;
const CACHE_NAME = 'book-catalogue-genclient';
const CACHE = join(tmpdir(), CACHE_NAME);
const ROOT = join(import.meta.dirname, '..');
/** A step that takes longer than this on a loaded 2-core machine is stuck: the test says which. */
const STEP_MS = 60_000;

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

function run(what: string, file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Ran> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env, timeout: STEP_MS, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err !== null && err.killed) reject(new Error(`${what} did not finish within ${STEP_MS} ms\n${stderr}`));
      else resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr });
    });
  });
}

const installed = async (name: keyof typeof PINS): Promise<boolean> =>
  readFile(join(CACHE, 'node_modules', name, 'package.json'), 'utf8').then(
    (text) => (JSON.parse(text) as { version: string }).version === PINS[name],
    () => false,
  );

/** undefined once both pinned packages are in the cache; else the one line saying what is skipped and why. */
async function fetchTools(): Promise<string | undefined> {
  if ((await installed('openapi-typescript')) && (await installed('openapi-fetch'))) return undefined;
  await mkdir(CACHE, { recursive: true });
  const specs = Object.entries(PINS).map(([name, version]) => `${name}@${version}`);
  // One retry, not npm's default two with a minute of back-off: an unreachable registry is told within seconds.
  const env = { ...process.env, npm_config_fetch_retries: '1', npm_config_update_notifier: 'false', NO_COLOR: '1' };
  const ran = await run('npm install', 'npm', ['install', '--prefix', CACHE, ...specs, '--no-save', '--no-audit', '--no-fund', '--prefer-offline'], CACHE, env);
  const npmCode = /^npm (?:error|ERR!) code (\S+)/m.exec(ran.stderr)?.[1];
  if (ran.code !== 0 && npmCode !== undefined && UNREACHABLE.has(npmCode)) {
    return `Skipping the generated-client round trip: the npm registry could not be reached (${npmCode}). Run it where the registry is reachable, or fetch once with: npm install --prefix ${CACHE} ${specs.join(' ')} --no-save`;
  }
  assert.equal(ran.code, 0, `npm install ${specs.join(' ')} failed:\n${ran.stderr}`);
  return undefined;
}

/**
 * What a client writer would write against the generated `paths`: every call below is typed by the
 * document, so a path, parameter, header or body the document gets wrong fails `tsc --strict`
 * before the service is asked anything.
 */
const clientSource = (baseUrl: string): string => `
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './types.ts';

const client = createClient<paths>({ baseUrl: ${JSON.stringify(baseUrl)} });
const login = await client.POST('/token', { body: { username: ${JSON.stringify(TEST_USER)}, password: ${JSON.stringify(TEST_PASSWORD)} } });
if (login.data === undefined) throw new Error('POST /token answered ' + login.response.status);
const token: string = login.data.data.token;
const auth: Middleware = { onRequest: ({ request }) => { request.headers.set('Authorization', token); return request; } };
client.use(auth);

const created = [];
for (const [title, author, year] of [['Dune', 'Frank Herbert', 1965], ['Emma', 'Jane Austen', 1815], ['Ulysses', 'James Joyce', 1922]] as const) {
  const res = await client.POST('/book', { body: { title, author, year } });
  if (res.data === undefined) throw new Error('POST /book answered ' + res.response.status);
  const location = res.response.headers.get('Location') ?? '';
  const id = Number(/^\\/book\\/(\\d+)$/.exec(location)?.[1]);
  const followed = await client.GET('/book/{id}', { params: { path: { id } } });
  created.push({ status: res.response.status, book: res.data.data, location, followed: followed.data?.data });
}

type ListQuery = NonNullable<paths['/books']['get']['parameters']['query']>;
/** The query of the Link header's next page (RFC 8288), if one follows. */
function nextQuery(link: string | null): ListQuery | undefined {
  const target = /^<([^>]+)>;\\s*rel="next"$/.exec(link ?? '')?.[1];
  if (target === undefined) return undefined;
  const params = new URL(target, 'http://link.invalid').searchParams;
  return { limit: Number(params.get('limit')), after: Number(params.get('after')) };
}
const limit: number = 2;
const pages: number[][] = [];
for (let query: ListQuery | undefined = { limit }; query !== undefined && pages.length < 10; ) {
  const page = await client.GET('/books', { params: { query } });
  if (page.data === undefined) throw new Error('GET /books answered ' + page.response.status);
  pages.push(page.data.data.map((b) => b.id));
  query = nextQuery(page.response.headers.get('Link'));
}

const search = await client.GET('/books', { params: { query: { q: 'ULYSS' } } });

const id = created[0]?.book.id ?? 0;
const path = { id };
const read = await client.GET('/book/{id}', { params: { path } });
const etag = read.response.headers.get('ETag') ?? '';
const put = await client.PUT('/book/{id}', { params: { path, header: { 'If-Match': etag } }, body: { year: 1966 } });
const stale = await client.PUT('/book/{id}', { params: { path, header: { 'If-Match': etag } }, body: { year: 1967 } });
const current = put.response.headers.get('ETag') ?? '';
const notModified = await client.GET('/book/{id}', { params: { path, header: { 'If-None-Match': current } } });
const removed = await client.DELETE('/book/{id}', { params: { path } });
const gone = await client.GET('/book/{id}', { params: { path } });

console.log(JSON.stringify({
  tokenIssued: token.split('.').length === 3,
  created,
  pages,
  search: search.data?.data.map((b) => b.title),
  put: { status: put.response.status, book: put.data?.data, etagChanged: current !== '' && current !== etag },
  stale: { status: stale.response.status, message: stale.error?.message },
  notModified: notModified.response.status,
  removed: removed.response.status,
  gone: { status: gone.response.status, message: gone.error?.message },
}));
`;

const TSCONFIG = {
  compilerOptions: { strict: true, noEmit: true, target: 'es2023', module: 'esnext', moduleResolution: 'bundler', lib: ['es2023', 'dom'], types: [], allowImportingTsExtensions: true },
  files: ['client.ts'],
};

describe('a client generated from GET /openapi.json (openapi-typescript + openapi-fetch)', () => {
  // Inside the cache, so that the client's imports resolve from the cache's node_modules.
  const temp = tempDirs(join(CACHE_NAME, 'run-'));
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(async () => {
    await app.close();
    await temp.removeAll();
  });

  it('compiles under tsc --strict and runs the round trip: token, create, pages, search, conditional writes, delete', async (t) => {
    const skip = await fetchTools();
    if (skip !== undefined) {
      process.stderr.write(`${skip}\n`);
      t.skip(skip);
      return;
    }
    const dir = await temp.make();
    const doc = await app.request('GET', '/openapi.json', { auth: false });
    assert.equal(doc.status, 200);
    await writeFile(join(dir, 'openapi.json'), doc.text);
    await writeFile(join(dir, 'package.json'), '{"type":"module","private":true}\n');
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
    await writeFile(join(dir, 'client.ts'), clientSource(app.url));

    const gen = await run('openapi-typescript', join(CACHE, 'node_modules', '.bin', 'openapi-typescript'), ['openapi.json', '-o', 'types.ts'], dir);
    assert.equal(gen.code, 0, `openapi-typescript failed:\n${gen.stderr}`);
    // The query's limit is an integer in the document, a number in the generated type (the client passes a number).
    assert.match(await readFile(join(dir, 'types.ts'), 'utf8'), /\blimit\?: number;/);

    const tsc = await run('tsc', join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', dir, '--noEmit', '--strict'], dir);
    assert.equal(tsc.code, 0, `the generated client does not compile:\n${tsc.stdout}${tsc.stderr}`);

    // The repository's tsx by its URL: the client's folder resolves packages from the cache alone.
    const client = await run('the client', process.execPath, ['--import', import.meta.resolve('tsx'), 'client.ts'], dir);
    assert.equal(client.code, 0, `the client failed:\n${client.stderr}`);
    const summary = JSON.parse(client.stdout) as {
      tokenIssued: boolean;
      created: { status: number; book: { id: number; title: string }; location: string; followed: unknown }[];
      pages: number[][];
      search: string[];
      put: { status: number; book: { year: number }; etagChanged: boolean };
      stale: { status: number; message: string };
      notModified: number;
      removed: number;
      gone: { status: number; message: string };
    };
    assert.equal(summary.tokenIssued, true);
    assert.deepEqual(
      summary.created.map((c) => c.status),
      [201, 201, 201],
    );
    for (const c of summary.created) {
      assert.equal(c.location, `/book/${c.book.id}`);
      assert.deepEqual(c.followed, c.book, 'GET on the Location header returns the created book');
    }
    const ids = summary.created.map((c) => c.book.id);
    assert.deepEqual(summary.pages, [ids.slice(0, 2), ids.slice(2)], 'limit 2, then the Link header to the last book');
    assert.deepEqual(summary.search, ['Ulysses']);
    assert.equal(summary.put.status, 200);
    assert.equal(summary.put.book.year, 1966);
    assert.equal(summary.put.etagChanged, true);
    assert.deepEqual(summary.stale, { status: 412, message: 'Precondition failed' });
    assert.equal(summary.notModified, 304);
    assert.equal(summary.removed, 200);
    assert.equal(summary.gone.status, 404);
  });
});
