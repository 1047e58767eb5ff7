import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseCommand, type Config } from '../src/cli/config.ts';
import { OPENAPI_DOCUMENT } from '../src/service/openapi-document.ts';
import { listPackageFolder, readPackageFile } from '../src/package-files.ts';
import { UI_FOLDER } from '../src/ui/assets.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { killAll, runMain, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const dirs = tempDirs('book-catalogue-ui-');
const SERVICE_ENV = { SECRET_TOKEN: 'x'.repeat(32), AUTH_PASSWORD: 'pw' };

/** The asset URLs the page links to, relative to it (the skip links' `#…` are places in the page itself). */
function assetLinks(html: string): string[] {
  return [...html.matchAll(/(?:href|src)="([^"#][^"]*)"/g)].map((m) => m[1] as string);
}

function serveConfig(argv: string[], env: Record<string, string> = {}): Config {
  const command = parseCommand({ argv, env });
  assert.equal(command.kind, 'serve');
  return (command as { config: Config }).config;
}

describe('GET / (the built-in page) with ui: true', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ ui: true });
  });
  after(() => app.close());

  it('serves HTML without a token, outside the envelope, revalidated, with a strong ETag', async () => {
    // The page as it is: fetch asks for gzip, whose form has a tag of its own (test/compression.test.ts).
    const res = await app.request('GET', '/', { auth: false, headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    assert.match(res.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]{43}"$/);
    assert.match(res.text, /^<!doctype html>/);
    assert.match(res.text, /<label for="username">Username<\/label>/);
  });

  it('carries a strict Content-Security-Policy and X-Frame-Options: DENY', async () => {
    const res = await app.request('GET', '/', { auth: false });
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    assert.deepEqual(directives.get('default-src'), ["'none'"]);
    assert.deepEqual(directives.get('script-src'), ["'self'"]);
    assert.deepEqual(directives.get('style-src'), ["'self'"]);
    assert.deepEqual(directives.get('connect-src'), ["'self'"]);
    assert.deepEqual(directives.get('frame-ancestors'), ["'none'"]);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|unsafe-hashes|data:|\*/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
  });

  it('has no inline script or style, no handler attribute and no other origin in the page', async () => {
    const { text } = await app.request('GET', '/', { auth: false });
    assert.doesNotMatch(text, /<script(?![^>]*\ssrc=)/);
    assert.doesNotMatch(text, /<style|\sstyle=|\son[a-z]+=/i);
    assert.doesNotMatch(text, /https?:|\/\//);
  });

  it('If-None-Match with the ETag (also weak, in a list, or *) answers 304 without a body', async () => {
    const first = await app.request('GET', '/', { auth: false });
    const etag = first.headers.get('etag') as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await app.request('GET', '/', { auth: false, headers: { 'if-none-match': header } });
      assert.equal(res.status, 304, header);
      assert.equal(res.text, '');
      assert.equal(res.headers.get('etag'), etag);
    }
    const stale = await app.request('GET', '/', { auth: false, headers: { 'if-none-match': '"stale"' } });
    assert.equal(stale.status, 200);
  });

  it('serves every linked asset with its type, a strong ETag and immutable caching (its URL carries the hash)', async () => {
    const { text } = await app.request('GET', '/', { auth: false });
    const links = assetLinks(text);
    assert.ok(links.length >= 3, 'the page links its style, icon and scripts');
    const types: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
    for (const link of links) {
      assert.match(link, /^ui\/[0-9a-f]{16}\/[a-z-]+\.(js|css|svg)$/);
      // Each file as it is: fetch asks for gzip, whose form has a tag of its own (test/compression.test.ts).
      const identity = { 'accept-encoding': 'identity' };
      const res = await app.request('GET', `/${link}`, { auth: false, headers: identity });
      assert.equal(res.status, 200, link);
      assert.equal(res.headers.get('content-type'), types[link.split('.').pop() as string]);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(res.headers.get('etag') ?? '', /^"[A-Za-z0-9_-]{43}"$/);
      const again = await app.request('GET', `/${link}`, { auth: false, headers: { ...identity, 'if-none-match': res.headers.get('etag') as string } });
      assert.equal(again.status, 304);
    }
  });

  it('an asset of another version, or an unknown file, is the ordinary 404 envelope', async () => {
    const { text } = await app.request('GET', '/', { auth: false });
    const [link] = assetLinks(text).filter((l) => l.endsWith('main.js'));
    const version = (link as string).split('/')[1] as string;
    for (const path of [`/ui/0000000000000000/main.js`, `/ui/${version}/nope.js`, `/ui/${version}/index.html`, `/ui/${version}`]) {
      const res = await app.request('GET', path, { auth: false });
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.json, { status: 404, message: 'Not found', data: null });
    }
  });

  it('HEAD / answers the headers alone; POST / is 405 with Allow', async () => {
    const head = await app.request('HEAD', '/', { auth: false });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers.get('content-type'), 'text/html; charset=utf-8');
    const post = await app.request('POST', '/', { auth: false });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  it('the first view (page, style, scripts, icon) is under 64 KB uncompressed', async () => {
    const page = await app.request('GET', '/', { auth: false });
    let total = Buffer.byteLength(page.text);
    // Each file once: main.js is both the module script and one of the module preloads.
    for (const link of new Set(assetLinks(page.text))) total += Buffer.byteLength((await app.request('GET', `/${link}`, { auth: false })).text);
    assert.ok(total < 64 * 1024, `${total} bytes`);
  });

  it('OpenAPI notes GET / in its description; the page adds no other route than / and its assets', () => {
    assert.match(OPENAPI_DOCUMENT.info.description ?? '', /GET \/ is the built-in web page/);
    const documented = new Set(Object.keys(OPENAPI_DOCUMENT.paths));
    const extra = app.server.app.routes().filter(({ pattern }) => !documented.has(pattern));
    assert.deepEqual(extra, [
      { pattern: '/', methods: ['GET', 'HEAD'] },
      { pattern: '/ui/{version}/{file}', methods: ['GET', 'HEAD'] },
    ]);
  });

  it('the API is unchanged beside it', async () => {
    const res = await app.request('GET', '/books');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('content-security-policy'), null);
  });
});

describe('the built-in page is off unless asked for', () => {
  after(async () => {
    await killAll();
    await dirs.removeAll();
  });

  it('createApp without ui: GET / and the assets are 404 as before', async () => {
    const app = await startApp();
    try {
      for (const path of ['/', '/ui/0000000000000000/main.js']) {
        const res = await app.request('GET', path, { auth: false });
        assert.deepEqual([res.status, res.json.message], [404, 'Not found'], path);
      }
      assert.equal((await app.request('POST', '/', { auth: false })).status, 404);
    } finally {
      await app.close();
    }
  });

  it('the CLI serves it by default; UI=off and --no-ui turn it off; another UI value is a startup error', () => {
    assert.equal(serveConfig([]).ui, true);
    assert.equal(serveConfig([], { UI: 'on' }).ui, true);
    assert.equal(serveConfig([], { UI: 'off' }).ui, false);
    assert.equal(serveConfig(['--no-ui']).ui, false);
    assert.equal(serveConfig(['--no-ui'], { UI: 'on' }).ui, false);
    assert.throws(() => serveConfig([], { UI: 'yes' }), /invalid built-in page setting "yes" \(UI\): expected on or off/);
  });

  it('node dist/main.js serves GET /, and with --no-ui or UI=off answers 404', async () => {
    for (const [argv, env, status] of [[[], {}, 200], [['--no-ui'], {}, 404], [[], { UI: 'off' }, 404]] as const) {
      const dir = await dirs.make();
      const service = await startMain({ args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', dir, ...argv], env: { ...SERVICE_ENV, ...env }, cwd: dir });
      try {
        const res = await fetch(`${service.url}/`);
        assert.equal(res.status, status, `${argv.join(' ')} ${JSON.stringify(env)}`);
        await res.arrayBuffer();
      } finally {
        await service.stop();
      }
    }
  });

  it('an invalid UI value stops startup with one line and exit code 2', async () => {
    const dir = await dirs.make();
    const exit = await runMain({ args: ['--data-dir', dir], env: { ...SERVICE_ENV, UI: 'maybe' }, cwd: dir });
    assert.equal(exit.code, 2);
    assert.match(exit.stderr, /invalid built-in page setting "maybe" \(UI\)/);
  });
});

describe('the page build', () => {
  it('ships only its own files: scripts compiled by tsc, plain CSS, an SVG icon and the HTML template', () => {
    const names = listPackageFolder(UI_FOLDER);
    assert.ok(names.includes('index.html') && names.includes('main.js') && names.includes('style.css'));
    for (const name of names) assert.match(name, /^[a-z-]+\.(js|css|svg|html)$/, name);
    for (const name of names.filter((n) => n.endsWith('.js'))) {
      const js = readPackageFile(UI_FOLDER + name).toString('utf8');
      assert.doesNotMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|localStorage|document\.cookie/, name);
      assert.doesNotMatch(js, /https?:\/\//, `${name} names no other origin`);
    }
  });
});
