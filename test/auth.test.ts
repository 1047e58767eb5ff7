import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, tokenRejections, type TestApp } from './helpers/app.ts';
import type { TokenFailure } from '../src/auth/jwt.ts';
import { rawRequest } from './helpers/raw.ts';
import { b64url, freshClaims, handSignedToken } from './helpers/token.ts';

const REQUIRED = { status: 401, message: 'Authorization token required', data: null };
const INVALID = { status: 401, message: 'Invalid token', data: null };

/** Every protected endpoint (docs/contract.md, "Authentication"). */
const PROTECTED = [
  ['POST', '/book'],
  ['GET', '/books'],
  ['GET', '/book/1'],
  ['PUT', '/book/1'],
  ['DELETE', '/book/1'],
] as const;

/** A fixed clock, injected as `now`, so expiry edges are exact. */
const NOW = 1_900_000_000;

describe('Authentication (docs/contract.md, "Authentication")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ now: () => NOW * 1000 });
    await app.request('POST', '/book', { body: { title: 't', author: 'a', year: 1 }, headers: { authorization: sign() } });
  });
  after(() => app.close());

  function sign(claims: Record<string, unknown> = freshClaims(NOW), header?: Record<string, unknown>): string {
    return handSignedToken({ claims, secret: TEST_SECRET, ...(header && { header }) });
  }

  it('§5.1 POST /token is public', async () => {
    const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
    assert.equal(res.status, 200);
  });

  describe('§5.6 401 Authorization token required without an Authorization header, on every protected endpoint', () => {
    for (const [method, path] of PROTECTED) {
      it(`401 Authorization token required for ${method} ${path} without an Authorization header`, async () => {
        const res = await app.request(method, path, { auth: false, ...(method !== 'GET' && method !== 'DELETE' && { body: { title: 'x' } }) });
        assert.equal(res.status, 401);
        assert.deepEqual(res.json, REQUIRED);
      });
    }
  });

  describe('missing, empty or blank header, or Bearer alone: 401 Authorization token required', () => {
    const rows: { name: string; line: string }[] = [
      { name: 'the header is empty', line: 'Authorization:\r\n' },
      { name: 'the header is blank spaces', line: 'Authorization:    \r\n' },
      { name: 'the header is a tab', line: 'Authorization: \t\r\n' },
      { name: 'the header is "Bearer" alone', line: 'Authorization: Bearer\r\n' },
      { name: 'the header is "Bearer" and spaces', line: 'Authorization: Bearer    \r\n' },
      { name: 'the header is "bearer" alone', line: 'Authorization: bearer\r\n' },
    ];
    for (const row of rows) {
      it(`401 Authorization token required when ${row.name}`, async () => {
        const res = await rawRequest(app.port, `GET /books HTTP/1.1\r\nHost: t\r\n${row.line}\r\n`);
        assert.equal(res.status, 401);
        assert.deepEqual(res.json, REQUIRED);
      });
    }
  });

  it('§5.6 the request does not reach the endpoint: a refused POST /book stores nothing', async () => {
    const before = (await app.request('GET', '/books', { headers: { authorization: sign() } })).text;
    await app.request('POST', '/book', { body: { title: 'sneaky', author: 'a', year: 1 }, auth: false });
    await app.request('POST', '/book', { body: { title: 'sneaky', author: 'a', year: 1 }, headers: { authorization: 'nope' } });
    assert.equal((await app.request('GET', '/books', { headers: { authorization: sign() } })).text, before);
  });

  it('auth is checked before the body: no token and a malformed body is 401, not 400', async () => {
    const res = await app.request('POST', '/book', { rawBody: '{nope', auth: false });
    assert.deepEqual(res.json, REQUIRED);
  });

  describe('accepted tokens', () => {
    // Each row's token is its own (a jti claim tells them apart): a token already verified is
    // answered from the cache, so a row reusing another's would prove nothing about its own form.
    let serial = 0;
    const fresh = (): string => sign({ ...freshClaims(NOW), jti: `row-${++serial}` });
    const rows: { name: string; header: () => string }[] = [
      { name: '§5.2 the raw token with no scheme prefix', header: () => fresh() },
      { name: 'a token the test signed itself with node:crypto createHmac and the same secret', header: () => fresh() },
      { name: '"Bearer <token>"', header: () => `Bearer ${fresh()}` },
      { name: '"bearer <token>" (scheme in lower case)', header: () => `bearer ${fresh()}` },
      { name: '"BEARER <token>" (scheme in upper case)', header: () => `BEARER ${fresh()}` },
      { name: '"bEaReR <token>" (scheme in mixed case)', header: () => `bEaReR ${fresh()}` },
      { name: '"Bearer  <token>" (several spaces)', header: () => `Bearer   ${fresh()}` },
      { name: 'a token with exp one second after now', header: () => sign({ exp: NOW + 1 }) },
      { name: 'a token with only exp (sub and iat are not required)', header: () => sign({ exp: NOW + 900 }) },
      { name: 'a token with nbf equal to now', header: () => sign({ ...freshClaims(NOW), nbf: NOW }) },
      { name: 'a token with nbf in the past', header: () => sign({ ...freshClaims(NOW), nbf: NOW - 60 }) },
      { name: 'a token with a different sub (one credential pair, no per-user store)', header: () => sign({ sub: 'x', exp: NOW + 5 }) },
      { name: 'a token whose header has no typ', header: () => sign(freshClaims(NOW), { alg: 'HS256' }) },
      { name: 'a token of exactly 8 KiB', header: () => sizedToken(8 * 1024) },
    ];
    const seen = new Set<string>();
    for (const row of rows) {
      it(`200 for ${row.name}`, async () => {
        const header = row.header();
        const token = header.replace(/^bearer +/i, '');
        assert.ok(!seen.has(token), 'a token no earlier row sent, so it is verified, not found in the cache');
        seen.add(token);
        const res = await app.request('GET', '/book/1', { headers: { authorization: header } });
        assert.equal(res.status, 200, res.text);
      });
    }
  });

  describe('§5.7 401 Invalid token when the token cannot be validated', () => {
    const parts = (token: string): string[] => token.split('.');
    const rows: { name: string; header: () => string; reason: TokenFailure }[] = [
      { name: 'it is garbage', header: () => 'not-a-token', reason: 'malformed' },
      { name: 'it has two parts', header: () => parts(sign()).slice(0, 2).join('.'), reason: 'malformed' },
      { name: 'it has four parts', header: () => `${sign()}.x`, reason: 'malformed' },
      { name: 'the signature part is empty', header: () => `${parts(sign()).slice(0, 2).join('.')}.`, reason: 'malformed' },
      { name: 'alg is none with an empty signature (an empty part: refused before alg is read)', header: () => `${unsigned(freshClaims(NOW))}.`, reason: 'malformed' },
      { name: 'alg is none with a signature that is no HMAC', header: () => `${unsigned(freshClaims(NOW))}.${b64url('no signature')}`, reason: 'alg-not-allowed' },
      { name: 'alg is none with a valid HS256 signature', header: () => sign(freshClaims(NOW), { alg: 'none', typ: 'JWT' }), reason: 'alg-not-allowed' },
      {
        name: 'alg is HS512 (signed with HMAC SHA-512)',
        header: () => handSignedToken({ header: { alg: 'HS512', typ: 'JWT' }, claims: freshClaims(NOW), secret: TEST_SECRET, hash: 'sha512' }),
        reason: 'alg-not-allowed',
      },
      {
        name: 'alg is HS384 (signed with HMAC SHA-384)',
        header: () => handSignedToken({ header: { alg: 'HS384', typ: 'JWT' }, claims: freshClaims(NOW), secret: TEST_SECRET, hash: 'sha384' }),
        reason: 'alg-not-allowed',
      },
      { name: 'alg is RS256 (a non-HMAC method)', header: () => sign(freshClaims(NOW), { alg: 'RS256', typ: 'JWT' }), reason: 'alg-not-allowed' },
      { name: 'alg is hs256 in lower case', header: () => sign(freshClaims(NOW), { alg: 'hs256', typ: 'JWT' }), reason: 'alg-not-allowed' },
      { name: 'the header has a crit parameter', header: () => sign(freshClaims(NOW), { alg: 'HS256', typ: 'JWT', crit: ['exp'] }), reason: 'crit-present' },
      { name: 'it is expired (exp before now)', header: () => sign({ ...freshClaims(NOW - 1000), exp: NOW - 100 }), reason: 'expired' },
      { name: 'exp equals now (no leeway)', header: () => sign({ exp: NOW }), reason: 'expired' },
      { name: 'exp is missing', header: () => sign({ sub: TEST_USER, iat: NOW }), reason: 'bad-claims' },
      { name: 'exp is a string', header: () => sign({ exp: String(NOW + 900) }), reason: 'bad-claims' },
      { name: 'nbf is in the future', header: () => sign({ ...freshClaims(NOW), nbf: NOW + 1 }), reason: 'not-yet-valid' },
      { name: 'nbf is not a number', header: () => sign({ ...freshClaims(NOW), nbf: 'soon' }), reason: 'bad-claims' },
      { name: 'the claims are a JSON array', header: () => handSignedToken({ claims: `[${NOW + 900}]`, secret: TEST_SECRET }), reason: 'bad-claims' },
      { name: 'the claims are not JSON', header: () => handSignedToken({ claims: '{exp:', secret: TEST_SECRET }), reason: 'bad-claims' },
      { name: 'it is signed with another secret', header: () => handSignedToken({ claims: freshClaims(NOW), secret: `${TEST_SECRET}x` }), reason: 'bad-signature' },
      { name: 'the payload was tampered with', header: () => tamperPayload(sign()), reason: 'bad-signature' },
      { name: 'the signature was tampered with', header: () => tamperSignature(sign()), reason: 'bad-signature' },
      { name: 'the signature is padded base64url', header: () => `${sign()}=`, reason: 'not-base64url' },
      { name: 'the payload is padded base64url', header: () => padPayload(sign()), reason: 'not-base64url' },
      { name: 'a segment uses standard base64 characters', header: () => `${sign().slice(0, -1)}+`, reason: 'not-base64url' },
      { name: 'it is over 8 KiB', header: () => sizedToken(8 * 1024 + 1), reason: 'too-large' },
      { name: 'it is over 8 KiB after a Bearer prefix', header: () => `Bearer ${sizedToken(8 * 1024 + 1)}`, reason: 'too-large' },
      { name: 'the scheme is Basic', header: () => `Basic ${sign()}`, reason: 'not-base64url' },
      { name: 'Bearer is glued to the token', header: () => `Bearer${sign()}`, reason: 'not-base64url' },
    ];
    for (const [i, row] of rows.entries()) {
      it(`401 Invalid token when ${row.name} (${row.reason})`, async () => {
        const reqId = `invalid-token-${i}`;
        const res = await app.request('GET', '/book/1', { headers: { authorization: row.header(), 'x-request-id': reqId } });
        assert.equal(res.status, 401);
        assert.deepEqual(res.json, INVALID);
        // Clients see one message; the debug log says which check refused it, so each row proves its own check.
        assert.deepEqual(tokenRejections(app, reqId), [row.reason]);
      });
    }
  });

  it('§5.4 tokens from POST /token validate against the same secret', async () => {
    const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
    const { token } = res.json.data as { token: string };
    assert.equal((await app.request('GET', '/books', { headers: { authorization: token } })).status, 200);
  });

  /** `header.payload` of an unsecured JWT (RFC 7519 §6: alg none), each part well formed. */
  function unsigned(claims: Record<string, unknown>): string {
    return `${b64url('{"alg":"none","typ":"JWT"}')}.${b64url(JSON.stringify(claims))}`;
  }

  function tamperPayload(token: string): string {
    const [h, , s] = token.split('.') as [string, string, string];
    return `${h}.${b64url(JSON.stringify({ ...freshClaims(NOW), sub: 'mallory' }))}.${s}`;
  }

  function tamperSignature(token: string): string {
    const last = token.at(-2) === 'A' ? 'B' : 'A';
    return `${token.slice(0, -2)}${last}${token.at(-1)}`;
  }

  function padPayload(token: string): string {
    const [h, p, s] = token.split('.') as [string, string, string];
    return `${h}.${p}${'='.repeat((4 - (p.length % 4)) % 4 || 4)}.${s}`;
  }

  /** A valid token of exactly `size` characters, grown with a filler claim. */
  function sizedToken(size: number): string {
    // header (36) + signature (43) + two dots; each 3 bytes of claims become 4 characters.
    const estimate = Math.floor(((size - 81) * 3) / 4) - JSON.stringify({ ...freshClaims(NOW), pad: '' }).length;
    for (let k = Math.max(0, estimate - 8); k < estimate + 8; k++) {
      const token = sign({ ...freshClaims(NOW), pad: 'x'.repeat(k) });
      if (token.length === size) return token;
    }
    throw new Error(`no token of exactly ${size} characters near a ${estimate}-character filler`);
  }
});

describe('login throttling (docs/contract.md, "Login throttling")', () => {
  const WINDOW_MS = 15 * 60 * 1000;
  const apps: TestApp[] = [];
  after(() => Promise.all(apps.map((a) => a.close())));

  /** An app whose clock the test moves. */
  async function throttled(loginMaxFailures?: number): Promise<{ app: TestApp; clock: { now: number } }> {
    const clock = { now: NOW * 1000 };
    const app = await startApp({ now: () => clock.now, ...(loginMaxFailures !== undefined && { loginMaxFailures }) });
    apps.push(app);
    return { app, clock };
  }
  const login = (app: TestApp, password: string) =>
    app.request('POST', '/token', { body: { username: TEST_USER, password }, auth: false });

  it('after LOGIN_MAX_FAILURES failures, 429 Too many login attempts with Retry-After, even for the right password', async () => {
    const { app } = await throttled(3);
    for (let i = 0; i < 3; i++) assert.equal((await login(app, 'wrong')).status, 401);
    const res = await login(app, TEST_PASSWORD);
    assert.equal(res.status, 429);
    assert.deepEqual(res.json, { status: 429, message: 'Too many login attempts', data: null });
    assert.equal(res.headers.get('retry-after'), '900');
  });

  it('Retry-After counts down to the end of the fixed window that started at the first failure', async () => {
    const { app, clock } = await throttled(2);
    await login(app, 'wrong');
    clock.now += 10 * 60 * 1000;
    await login(app, 'wrong');
    const res = await login(app, 'wrong');
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '300');
  });

  it('once the window has passed, POST /token answers normally again', async () => {
    const { app, clock } = await throttled(2);
    await login(app, 'wrong');
    await login(app, 'wrong');
    clock.now += WINDOW_MS - 1000;
    assert.equal((await login(app, TEST_PASSWORD)).status, 429);
    clock.now += 1000;
    assert.equal((await login(app, TEST_PASSWORD)).status, 200);
  });

  it('the default is 20 failures', async () => {
    const { app } = await throttled();
    for (let i = 0; i < 20; i++) assert.equal((await login(app, 'wrong')).status, 401, `attempt ${i + 1}`);
    assert.equal((await login(app, 'wrong')).status, 429);
  });

  it('LOGIN_MAX_FAILURES 0 disables throttling', async () => {
    const { app } = await throttled(0);
    for (let i = 0; i < 30; i++) assert.equal((await login(app, 'wrong')).status, 401, `attempt ${i + 1}`);
    assert.equal((await login(app, TEST_PASSWORD)).status, 200);
  });

  it('only 401 Invalid credentials answers count: 400 Invalid request payload does not', async () => {
    const { app } = await throttled(2);
    for (let i = 0; i < 5; i++) {
      assert.equal((await app.request('POST', '/token', { rawBody: '{bad', auth: false })).status, 400);
    }
    assert.equal((await login(app, 'wrong')).status, 401);
    assert.equal((await login(app, TEST_PASSWORD)).status, 200);
  });

  it('only 401 Invalid credentials answers count: invalid tokens on protected routes do not', async () => {
    const { app } = await throttled(1);
    for (let i = 0; i < 5; i++) assert.equal((await app.request('GET', '/books', { headers: { authorization: 'bad' } })).status, 401);
    assert.equal((await login(app, TEST_PASSWORD)).status, 200);
  });

  it('a success does not reset the count', async () => {
    const { app } = await throttled(2);
    assert.equal((await login(app, 'wrong')).status, 401);
    assert.equal((await login(app, TEST_PASSWORD)).status, 200);
    assert.equal((await login(app, 'wrong')).status, 401);
    assert.equal((await login(app, TEST_PASSWORD)).status, 429);
  });

  it('throttling is per client address: another address may still log in', async () => {
    const { app } = await throttled(1);
    await login(app, 'wrong');
    assert.equal((await login(app, TEST_PASSWORD)).status, 429);
    // 127.0.0.2 is loopback too on Linux: the same server sees a different peer address.
    const other = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ username: TEST_USER, password: TEST_PASSWORD });
      request(`${app.url}/token`, { method: 'POST', localAddress: '127.0.0.2', headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end(body);
    });
    assert.equal(other, 200);
  });

  it('a throttled client can still use a token it already holds', async () => {
    const { app } = await throttled(1);
    await login(app, 'wrong');
    assert.equal((await login(app, TEST_PASSWORD)).status, 429);
    const token = handSignedToken({ claims: freshClaims(NOW), secret: TEST_SECRET });
    assert.equal((await app.request('GET', '/books', { headers: { authorization: token } })).status, 200);
  });
});

describe('token lifetime as the clock moves (docs/contract.md, "Tokens")', () => {
  const clock = { now: NOW * 1000 };
  let app: TestApp;
  before(async () => {
    app = await startApp({ now: () => clock.now });
  });
  after(() => app.close());
  const get = (token: string) => app.request('GET', '/books', { headers: { authorization: token } });

  it('a token accepted before is Invalid token from the second its exp is reached', async () => {
    clock.now = NOW * 1000;
    const token = handSignedToken({ claims: freshClaims(NOW), secret: TEST_SECRET });
    assert.equal((await get(token)).status, 200);
    clock.now = (NOW + 899) * 1000;
    assert.equal((await get(token)).status, 200);
    clock.now = (NOW + 900) * 1000;
    assert.deepEqual((await get(token)).json, INVALID);
  });

  it('a token from POST /token expires 15 minutes after issue', async () => {
    clock.now = NOW * 1000;
    const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
    const { token } = res.json.data as { token: string };
    clock.now = (NOW + 15 * 60 - 1) * 1000;
    assert.equal((await get(token)).status, 200);
    clock.now = (NOW + 15 * 60) * 1000;
    assert.deepEqual((await get(token)).json, INVALID);
  });

  it('a token refused for nbf in the future is accepted once nbf is reached', async () => {
    clock.now = NOW * 1000;
    const token = handSignedToken({ claims: { ...freshClaims(NOW), nbf: NOW + 60 }, secret: TEST_SECRET });
    assert.deepEqual((await get(token)).json, INVALID);
    clock.now = (NOW + 60) * 1000;
    assert.equal((await get(token)).status, 200);
  });
});
