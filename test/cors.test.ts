import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, parseCommand } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';
const preflight = (origin: string, method = 'PUT'): Record<string, string> => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': 'authorization, content-type, if-match',
});

describe('CORS is off by default (docs/contract.md, "Cross-origin requests")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('an answer to a request with Origin carries no Access-Control-* header and no Vary', async () => {
    const res = await app.request('GET', '/books', { headers: { origin: ALLOWED } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('vary'), null);
  });

  it('a preflight is an ordinary OPTIONS: 405 Method not allowed with Allow', async () => {
    const res = await app.request('OPTIONS', '/book/1', { auth: false, headers: preflight(ALLOWED) });
    assert.deepEqual(res.json, { status: 405, message: 'Method not allowed', data: null });
    assert.equal(res.headers.get('allow'), 'DELETE, GET, HEAD, PUT');
    assert.equal(res.headers.get('access-control-allow-origin'), null);
  });
});

describe('CORS_ORIGINS enables CORS for the listed origins', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ corsOrigins: [ALLOWED, 'http://localhost:5173'] });
  });
  after(() => app.close());

  it('a preflight from a listed origin answers 200 OK with the Access-Control-Allow-* headers, no token needed', async () => {
    const res = await app.request('OPTIONS', '/book/1', { auth: false, headers: preflight(ALLOWED) });
    assert.deepEqual(res.json, { status: 200, message: 'OK', data: null });
    assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED);
    assert.equal(res.headers.get('access-control-allow-methods'), 'DELETE, GET, HEAD, OPTIONS, PUT');
    assert.equal(res.headers.get('allow'), 'DELETE, GET, HEAD, OPTIONS, PUT');
    assert.equal(res.headers.get('access-control-allow-headers'), 'Authorization, Cache-Control, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id');
    assert.equal(res.headers.get('access-control-max-age'), '600');
    assert.match(res.headers.get('vary') ?? '', /^Origin, Access-Control-Request-Method/);
    assert.equal(res.headers.get('access-control-allow-credentials'), null, 'the token travels in a header, not a cookie');
  });

  it('a preflight for GET /events allows what event-stream clients send when they resume; WWW-Authenticate and Allow are readable', async () => {
    const res = await app.request('OPTIONS', '/events', {
      auth: false,
      headers: { origin: ALLOWED, 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, cache-control, last-event-id' },
    });
    assert.equal(res.status, 200);
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(', ');
    for (const header of ['authorization', 'cache-control', 'if-none-match', 'last-event-id']) assert.ok(allowed.includes(header), header);
    const refused = await app.request('GET', '/events', { auth: false, headers: { origin: ALLOWED } });
    assert.equal(refused.status, 401);
    const exposed = (refused.headers.get('access-control-expose-headers') ?? '').split(', ');
    for (const header of ['WWW-Authenticate', 'Allow']) assert.ok(exposed.includes(header), header);
  });

  it('the preflight lists the methods of the path it asks about', async () => {
    const res = await app.request('OPTIONS', '/books', { auth: false, headers: preflight(ALLOWED, 'GET') });
    assert.equal(res.headers.get('access-control-allow-methods'), 'GET, HEAD, OPTIONS');
  });

  it('a preflight from an origin not listed is an ordinary OPTIONS: 200 with Allow and no Access-Control-Allow-Origin', async () => {
    const res = await app.request('OPTIONS', '/book/1', { auth: false, headers: preflight(OTHER) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('allow'), 'DELETE, GET, HEAD, OPTIONS, PUT');
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('access-control-allow-methods'), null);
  });

  it('OPTIONS without Access-Control-Request-Method is not a preflight: 200 with Allow, which lists OPTIONS', async () => {
    const res = await app.request('OPTIONS', '/books', { auth: false, headers: { origin: ALLOWED } });
    assert.deepEqual(res.json, { status: 200, message: 'OK', data: null });
    assert.equal(res.headers.get('allow'), 'GET, HEAD, OPTIONS');
    assert.equal(res.headers.get('access-control-allow-methods'), null);
    const other = await app.request('PATCH', '/books', { auth: false });
    assert.equal(other.status, 405);
    assert.equal(other.headers.get('allow'), 'GET, HEAD, OPTIONS', 'a 405 lists OPTIONS too while CORS is on');
  });

  it('a preflight for an unknown path is 404 Not found', async () => {
    const res = await app.request('OPTIONS', '/nowhere', { auth: false, headers: preflight(ALLOWED) });
    assert.deepEqual(res.json, { status: 404, message: 'Not found', data: null });
    assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED, 'so the page can read the error');
  });

  it('answers to a listed origin carry Access-Control-Allow-Origin, exposed ETag and Vary: Origin', async () => {
    const created = await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 }, headers: { origin: 'http://localhost:5173' } });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('access-control-allow-origin'), 'http://localhost:5173');
    assert.equal(created.headers.get('access-control-expose-headers'), 'Allow, ETag, Link, Location, Retry-After, WWW-Authenticate, X-Last-Seq, X-Request-Id, X-Total-Count');
    assert.equal(created.headers.get('vary'), 'Origin');
  });

  it('error answers to a listed origin carry Access-Control-Allow-Origin too', async () => {
    const res = await app.request('GET', '/books', { auth: false, headers: { origin: ALLOWED } });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED);
  });

  it('answers to an origin not listed carry only Vary: Origin', async () => {
    const res = await app.request('GET', '/books', { headers: { origin: OTHER } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), null);
    assert.equal(res.headers.get('vary'), 'Origin');
  });
});

describe('CORS_ORIGINS=* allows any origin', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ corsOrigins: ['*'] });
  });
  after(() => app.close());

  it('any origin gets Access-Control-Allow-Origin: * and the preflight succeeds', async () => {
    const res = await app.request('OPTIONS', '/book', { auth: false, headers: preflight(OTHER, 'POST') });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
    assert.equal((await app.request('GET', '/books', { headers: { origin: OTHER } })).headers.get('access-control-allow-origin'), '*');
  });
});

describe('CORS_ORIGINS configuration', () => {
  const serve = (env: Record<string, string>) => {
    const command = parseCommand({ argv: [], env });
    assert.equal(command.kind, 'serve');
    return command.kind === 'serve' ? command.config : undefined;
  };

  it('comma-separated origins, blanks around them ignored', () => {
    assert.deepEqual(serve({ CORS_ORIGINS: ' https://app.example.com, http://localhost:5173 ,' })?.corsOrigins, [ALLOWED, 'http://localhost:5173']);
  });

  it('unset or empty: CORS off', () => {
    assert.equal(serve({})?.corsOrigins, undefined);
    assert.equal(serve({ CORS_ORIGINS: '' })?.corsOrigins, undefined);
  });

  const invalid = ['https://app.example.com/', 'app.example.com', 'https://app.example.com/path', 'ftp://files.example.com', 'HTTPS://APP.EXAMPLE.COM'];
  for (const entry of invalid) {
    it(`a startup error names the entry when it is not an origin as browsers send it: ${entry}`, () => {
      assert.throws(() => parseCommand({ argv: [], env: { CORS_ORIGINS: entry } }), (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.ok(err.message.includes(JSON.stringify(entry)), err.message);
        return true;
      });
    });
  }
});
