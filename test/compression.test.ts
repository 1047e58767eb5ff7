import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMetricsServer, listen, Registry, type Book } from '../src/index.ts';
import { OPENAPI_DOCUMENT } from '../src/service/openapi-document.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { decoded, encodedGet, type EncodedAnswer } from './helpers/encoded-get.ts';

/*
 * Answers in the coding the request takes (docs/contract.md, "Compression"), seen on the wire:
 * fetch would decode them out of sight, so these requests go through node:http, which does not.
 */

function catalogue(count: number): Book[] {
  return Array.from({ length: count }, (_, i) => ({ id: i + 1, title: `Volume ${i} of the "long" set`, author: i % 5 === 0 ? 'Émile Zola' : 'Jane Austen', year: 1800 + (i % 200) }));
}

/** The two answers agree on what they carry, each says so, and each Content-Length is its own bytes'. */
function assertSameRepresentation(gzip: EncodedAnswer, identity: EncodedAnswer, what: string): void {
  assert.equal(identity.status, 200, what);
  assert.equal(gzip.status, 200, what);
  assert.equal(gzip.headers['content-encoding'], 'gzip', what);
  assert.equal(identity.headers['content-encoding'], undefined, what);
  assert.equal(gzip.headers.vary, 'Accept-Encoding', what);
  assert.equal(identity.headers.vary, 'Accept-Encoding', what);
  assert.equal(gzip.headers['content-type'], identity.headers['content-type'], what);
  assert.equal(Number(gzip.headers['content-length']), gzip.body.length, what);
  assert.equal(Number(identity.headers['content-length']), identity.body.length, what);
  assert.ok(gzip.body.length < identity.body.length / 2, `${what}: ${gzip.body.length} bytes gzip-encoded for ${identity.body.length}`);
  assert.ok(decoded(gzip).equals(identity.body), `${what}: the gzip form decodes to other bytes`);
}

describe('compression (docs/contract.md, "Compression")', () => {
  let app: TestApp;
  let auth: Record<string, string>;
  const GZIP = { 'accept-encoding': 'gzip' };
  before(async () => {
    app = await startApp({ catalogue: catalogue(3000), ui: true, logLevel: 'warn' });
    auth = { authorization: app.token() };
  });
  after(() => app.close());

  describe('Accept-Encoding is read as RFC 9110 §12.5.3 has it', () => {
    const ROWS: readonly [header: string | undefined, gzip: boolean][] = [
      [undefined, false],
      ['gzip', true],
      ['GZIP', true],
      ['x-gzip', true],
      ['gzip, deflate, br', true],
      ['*', true],
      ['gzip;q=0.8', true],
      ['gzip ; Q=0.001', true],
      ['br;q=0.1, gzip;q=0.5', true],
      ['deflate, *;q=0.1', true],
      ['identity;q=0, gzip', true],
      ['', false],
      ['gzip;q=0', false],
      ['gzip;q=0.000', false],
      ['*;q=0', false],
      ['*, gzip;q=0', false],
      ['br, deflate', false],
      ['gzip;q=0.5, identity', false],
      ['identity;q=0', false],
      ['gzip;q=2', false],
      ['gzip;q=0.5555', false],
    ];
    for (const [header, gzip] of ROWS) {
      it(`${header === undefined ? 'without Accept-Encoding' : `Accept-Encoding: ${JSON.stringify(header)}`}: ${gzip ? 'gzip' : 'as it is'}, with Vary either way`, async () => {
        const res = await encodedGet(app.port, '/books?limit=100', { ...auth, ...(header !== undefined && { 'accept-encoding': header }) });
        const identity = await encodedGet(app.port, '/books?limit=100', auth);
        assert.equal(res.status, 200);
        assert.equal(res.headers['content-encoding'], gzip ? 'gzip' : undefined);
        assert.equal(res.headers.vary, 'Accept-Encoding');
        assert.equal(Number(res.headers['content-length']), res.body.length);
        assert.ok(decoded(res).equals(identity.body), 'the answer decodes to the page');
      });
    }
  });

  it('a page of books, the OpenAPI document and the page\'s files: gzip decodes to the answer as it is, each with its own Content-Length, Vary on both', async () => {
    const page = await encodedGet(app.port, '/', {});
    const asset = /(?:href|src)="(ui\/[0-9a-f]{16}\/[a-z-]+\.js)"/.exec(page.body.toString('utf8'))?.[1];
    assert.ok(asset !== undefined, 'the page links a script');
    for (const path of ['/books?limit=100', '/books?limit=1000', '/openapi.json', '/', `/${asset}`]) {
      const headers = path.startsWith('/books') ? auth : {};
      // Twice: a reply made ahead is compressed on the first request that takes gzip, and kept.
      for (const round of [1, 2]) {
        assertSameRepresentation(await encodedGet(app.port, path, { ...headers, ...GZIP }), await encodedGet(app.port, path, headers), `${path} (${round})`);
      }
    }
  });

  it('a full list of at most 64 KiB, one buffer per state: gzip decodes to it, with its Content-Length', async () => {
    const small = await startApp({ catalogue: catalogue(200), logLevel: 'warn' });
    try {
      const headers = { authorization: small.token() };
      const identity = await encodedGet(small.port, '/books', headers);
      assert.ok(identity.body.length < 64 * 1024 && identity.body.length > 4096, `the list is ${identity.body.length} bytes`);
      assertSameRepresentation(await encodedGet(small.port, '/books', { ...headers, ...GZIP }), identity, 'GET /books');
    } finally {
      await small.close();
    }
  });

  it('the gzip form has an ETag of its own (-gzip inside the quotes), and If-None-Match answers 304 for the form it names, with Vary', async () => {
    for (const [path, headers] of [['/books?limit=100', auth], ['/openapi.json', {}]] as const) {
      const identity = await encodedGet(app.port, path, headers);
      const gzip = await encodedGet(app.port, path, { ...headers, ...GZIP });
      const tag = identity.headers.etag as string;
      assert.match(tag, /^"[^"]+"$/, path);
      assert.equal(gzip.headers.etag, `${tag.slice(0, -1)}-gzip"`, path);
      const current = await encodedGet(app.port, path, { ...headers, ...GZIP, 'if-none-match': gzip.headers.etag as string });
      assert.equal(current.status, 304, path);
      assert.equal(current.body.length, 0, path);
      assert.equal(current.headers.etag, gzip.headers.etag, path);
      assert.equal(current.headers.vary, 'Accept-Encoding', path);
      const plainCurrent = await encodedGet(app.port, path, { ...headers, 'if-none-match': tag });
      assert.equal(plainCurrent.status, 304, path);
      assert.equal(plainCurrent.headers.vary, 'Accept-Encoding', path);
      // Each tag names its own form: the other form is sent whole.
      assert.equal((await encodedGet(app.port, path, { ...headers, ...GZIP, 'if-none-match': tag })).status, 200, path);
      assert.equal((await encodedGet(app.port, path, { ...headers, 'if-none-match': gzip.headers.etag as string })).status, 200, path);
      assert.equal((await encodedGet(app.port, path, { ...headers, ...GZIP, 'if-match': gzip.headers.etag as string })).status, 200, path);
      assert.equal((await encodedGet(app.port, path, { ...headers, ...GZIP, 'if-match': tag })).status, 412, path);
    }
  });

  it('HEAD gives the headers GET gives, gzip-encoded too', async () => {
    for (const [path, headers] of [['/books?limit=100', auth], ['/openapi.json', {}]] as const) {
      const get = await encodedGet(app.port, path, { ...headers, ...GZIP });
      const head = await encodedGet(app.port, path, { ...headers, ...GZIP }, 'HEAD');
      assert.equal(get.headers['content-encoding'], 'gzip', path);
      assert.equal(head.body.length, 0);
      for (const name of ['content-encoding', 'content-length', 'content-type', 'etag', 'vary']) assert.equal(head.headers[name], get.headers[name], `${path} ${name}`);
    }
  });

  it('answers under 1 KiB are sent as they are, without Vary: a book, an error, /healthz, a token', async () => {
    // The same request headers get a longer answer gzip-encoded: what leaves these as they are is their size.
    assert.equal((await encodedGet(app.port, '/books?limit=100', { ...auth, ...GZIP })).headers['content-encoding'], 'gzip');
    const token = await encodedGet(app.port, '/token', GZIP, 'POST');
    for (const res of [
      await encodedGet(app.port, '/book/1', { ...auth, ...GZIP }),
      await encodedGet(app.port, '/book/999999', { ...auth, ...GZIP }),
      await encodedGet(app.port, '/books', GZIP),
      await encodedGet(app.port, '/healthz', GZIP),
      token,
    ]) {
      assert.equal(res.headers['content-encoding'], undefined, res.body.toString());
      assert.equal(res.headers.vary, undefined, res.body.toString());
      assert.ok(res.body.length < 1024);
    }
  });

  it('a book of 1 KiB or more is sent gzip-encoded, and a write names it by either tag (If-Match holds, If-None-Match matches)', async () => {
    const long = { title: 'T'.repeat(1000), author: 'A'.repeat(1000), year: 2000 };
    const created = await app.request('POST', '/book', { body: long });
    const id = (created.json.data as { id: number }).id;
    const gzip = await encodedGet(app.port, `/book/${id}`, { ...auth, ...GZIP });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.deepEqual((JSON.parse(decoded(gzip).toString('utf8')) as { data: unknown }).data, { id, ...long });
    const gzipTag = gzip.headers.etag as string;
    assert.equal(gzipTag, `${(created.headers.get('etag') as string).slice(0, -1)}-gzip"`);
    assert.equal((await app.request('PUT', `/book/${id}`, { body: { year: 2001 }, headers: { 'if-none-match': gzipTag } })).status, 412);
    assert.equal((await app.request('PUT', `/book/${id}`, { body: { year: 2001 }, headers: { 'if-match': gzipTag } })).status, 200);
    assert.equal((await app.request('PUT', `/book/${id}`, { body: { year: 2002 }, headers: { 'if-match': gzipTag } })).status, 412, 'the tag of the state replaced');
    assert.equal((await app.request('DELETE', `/book/${id}`, { headers: { 'if-match': gzipTag } })).status, 412);
  });

  it('GET /events is never compressed', async () => {
    assert.equal((await encodedGet(app.port, '/openapi.json', { ...auth, ...GZIP })).headers['content-encoding'], 'gzip', 'the same request headers get a document gzip-encoded');
    const controller = new AbortController();
    const res = await fetch(`${app.url}/events`, { headers: { ...auth, ...GZIP }, signal: controller.signal });
    try {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-encoding'), null);
      assert.equal(res.headers.get('vary'), null);
    } finally {
      controller.abort();
    }
  });

  it('with CORS on for listed origins, Vary names Origin and Accept-Encoding', async () => {
    const origin = 'https://app.example.com';
    const cors = await startApp({ catalogue: catalogue(100), corsOrigins: [origin], logLevel: 'warn' });
    try {
      const headers = { authorization: cors.token(), origin };
      for (const coding of [GZIP, {}]) {
        const res = await encodedGet(cors.port, '/books?limit=100', { ...headers, ...coding });
        assert.equal(res.headers.vary, 'Origin, Accept-Encoding');
        assert.equal(res.headers['access-control-allow-origin'], origin);
      }
      assert.equal((await encodedGet(cors.port, '/book/1', { ...headers, ...GZIP })).headers.vary, 'Origin');
    } finally {
      await cors.close();
    }
  });

  it('the OpenAPI document names Content-Encoding and Vary on the reads\' 200s, and Vary on their 304s', () => {
    for (const path of ['/books', '/book/{id}', '/changes', '/openapi.json']) {
      const get = OPENAPI_DOCUMENT.paths[path]?.get;
      assert.deepEqual(get?.responses['200']?.headers?.['Content-Encoding']?.schema, { type: 'string', enum: ['gzip'] }, path);
      assert.ok(get?.responses['200']?.headers?.Vary, path);
      assert.ok(get?.responses['304']?.headers?.Vary, path);
      assert.ok(OPENAPI_DOCUMENT.paths[path]?.head?.responses['200']?.headers?.['Content-Encoding'], `HEAD ${path}`);
    }
    // A long book's PUT answer is compressed as its GET is (content-coding.ts looks at the status, not the method).
    assert.ok(OPENAPI_DOCUMENT.paths['/book/{id}']?.put?.responses['200']?.headers?.['Content-Encoding'], 'PUT /book/{id}');
    assert.equal(OPENAPI_DOCUMENT.paths['/events']?.get?.responses['200']?.headers?.['Content-Encoding'], undefined);
  });

  it('the metrics listener\'s exposition is gzip-encoded for a scraper that takes it', async () => {
    const registry = new Registry();
    const gauge = registry.gauge('test_padding', 'Padding.', ['n']);
    for (let i = 0; i < 100; i++) gauge.labels(String(i)).set(i);
    const server = createMetricsServer(registry);
    const { port } = await listen(server, 0, '127.0.0.1');
    try {
      const identity = await encodedGet(port, '/metrics', {});
      assertSameRepresentation(await encodedGet(port, '/metrics', GZIP), identity, '/metrics');
    } finally {
      await server.shutdown(0);
    }
  });
});
