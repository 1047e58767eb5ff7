import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyToken } from '../src/auth/jwt.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';
import { rawRequest } from './helpers/raw.ts';

const INVALID_PAYLOAD = { status: 400, message: 'Invalid request payload', data: null };
const INVALID_CREDENTIALS = { status: 401, message: 'Invalid credentials', data: null };

describe('POST /token (docs/contract.md, "Logins")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ loginMaxFailures: 0 });
  });
  after(() => app.close());

  describe('§4.1.1 400 Invalid request payload when the body cannot be parsed into a LoginRequest', () => {
    const rows: { name: string; rawBody: string }[] = [
      { name: 'an empty body', rawBody: '' },
      { name: 'malformed JSON', rawBody: '{"username":' },
      { name: 'a JSON array', rawBody: '["librarian","x"]' },
      { name: 'JSON null', rawBody: 'null' },
      { name: 'a JSON string', rawBody: '"librarian"' },
      { name: 'a JSON number', rawBody: '42' },
      { name: 'username missing', rawBody: '{"password":"x"}' },
      { name: 'password missing', rawBody: '{"username":"librarian"}' },
      { name: 'username is a number', rawBody: '{"username":1,"password":"x"}' },
      { name: 'password is null', rawBody: '{"username":"librarian","password":null}' },
      { name: 'password is an array', rawBody: '{"username":"librarian","password":["x"]}' },
      { name: 'username is an object', rawBody: '{"username":{},"password":"x"}' },
      { name: 'a leading byte-order mark', rawBody: '\uFEFF{"username":"librarian","password":"x"}' },
    ];
    for (const row of rows) {
      it(`400 Invalid request payload when the body is ${row.name}`, async () => {
        const res = await app.request('POST', '/token', { rawBody: row.rawBody, auth: false });
        assert.equal(res.status, 400);
        assert.deepEqual(res.json, INVALID_PAYLOAD);
      });
    }

    it('400 Invalid request payload when the body is invalid UTF-8', async () => {
      const body = Buffer.concat([Buffer.from('{"username":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","password":"x"}')]);
      const head = `POST /token HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
      const res = await rawRequest(app.port, Buffer.concat([Buffer.from(head), body]));
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, INVALID_PAYLOAD);
    });
  });

  describe('§4.1.2 401 Invalid credentials when the username or password does not equal the configured pair', () => {
    const rows: { name: string; username: string; password: string }[] = [
      { name: 'the password is wrong', username: TEST_USER, password: 'wrong' },
      { name: 'the username is wrong', username: 'someone', password: TEST_PASSWORD },
      { name: 'both are wrong', username: 'someone', password: 'wrong' },
      { name: 'the password is a prefix of the right one', username: TEST_USER, password: TEST_PASSWORD.slice(0, -1) },
      { name: 'the password has an extra character', username: TEST_USER, password: `${TEST_PASSWORD}!` },
      { name: 'the username differs only in case', username: TEST_USER.toUpperCase(), password: TEST_PASSWORD },
      { name: 'the password has surrounding spaces', username: TEST_USER, password: ` ${TEST_PASSWORD} ` },
      { name: 'both are empty strings', username: '', password: '' },
      { name: 'username and password are swapped', username: TEST_PASSWORD, password: TEST_USER },
    ];
    for (const row of rows) {
      it(`401 Invalid credentials when ${row.name}`, async () => {
        const res = await app.request('POST', '/token', { body: { username: row.username, password: row.password }, auth: false });
        assert.equal(res.status, 401);
        assert.deepEqual(res.json, INVALID_CREDENTIALS);
      });
    }
  });

  describe('§4.1.3 200 Token generated successfully when the credentials match', () => {
    it('200 Token generated successfully with data = {token}', async () => {
      const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
      assert.equal(res.status, 200);
      assert.equal(res.json.status, 200);
      assert.equal(res.json.message, 'Token generated successfully');
      const data = res.json.data as { token: unknown };
      assert.deepEqual(Object.keys(data), ['token']);
      assert.equal(typeof data.token, 'string');
    });

    it('the token is an HS256 JWT for the user that verifies with the configured secret', async () => {
      const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
      const { token } = res.json.data as { token: string };
      const claims = verifyToken(token, [Buffer.from(TEST_SECRET)], Math.floor(Date.now() / 1000));
      assert.equal(claims.sub, TEST_USER);
    });

    it('the token opens every protected endpoint', async () => {
      const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
      const { token } = res.json.data as { token: string };
      const created = await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 1 }, headers: { authorization: token } });
      assert.equal(created.status, 201);
      const id = (created.json.data as { id: number }).id;
      for (const [method, path] of [['GET', '/books'], ['GET', `/book/${id}`], ['PUT', `/book/${id}`], ['DELETE', `/book/${id}`]] as const) {
        const r = await app.request(method, path, { headers: { authorization: token }, ...(method === 'PUT' && { body: {} }) });
        assert.equal(r.status, 200, `${method} ${path}`);
      }
    });

    it('extra fields in the LoginRequest are ignored', async () => {
      const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD, role: 'admin' }, auth: false });
      assert.equal(res.status, 200);
    });

    it('POST /token needs no Authorization header and ignores an invalid one (docs/contract.md, "Authentication")', async () => {
      const res = await app.request('POST', '/token', {
        body: { username: TEST_USER, password: TEST_PASSWORD },
        headers: { authorization: 'garbage' },
      });
      assert.equal(res.status, 200);
    });
  });
});

describe('POST /token when signing fails (docs/contract.md, "Logins")', () => {
  let app: TestApp;
  before(async () => {
    // A key node:crypto refuses: createHmac throws the moment a token is signed.
    app = await startApp({ secret: new Proxy(new Uint8Array(32), {}) });
  });
  after(() => app.close());

  it('500 Could not generate token, data null, detail only in the server log', async () => {
    const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
    assert.equal(res.status, 500);
    assert.deepEqual(res.json, { status: 500, message: 'Could not generate token', data: null });
    assert.ok(app.logs.some((line) => line.includes('token signing failed')));
  });
});

describe('POST /token across seconds (one token signed per second)', () => {
  const T0 = 1_800_000_000;
  let clockMs = T0 * 1000;
  let app: TestApp;
  before(async () => {
    app = await startApp({ now: () => clockMs, logLevel: 'silent' });
  });
  after(() => app.close());

  const login = async (): Promise<{ token: string; iat: unknown; exp: unknown }> => {
    const res = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
    assert.equal(res.status, 200);
    const { token } = res.json.data as { token: string };
    const claims = verifyToken(token, [Buffer.from(TEST_SECRET)], clockMs / 1000);
    return { token, iat: claims.iat, exp: claims.exp };
  };

  it('every login carries iat = the current second and exp = iat + 900, however the clock moves', async () => {
    const first = await login();
    assert.deepEqual([first.iat, first.exp], [T0, T0 + 900]);
    clockMs += 999;
    assert.equal((await login()).token, first.token, 'the same second signs the same bytes');
    clockMs += 1;
    const next = await login();
    assert.deepEqual([next.iat, next.exp], [T0 + 1, T0 + 901]);
    clockMs -= 5000;
    const earlier = await login();
    assert.deepEqual([earlier.iat, earlier.exp], [T0 - 4, T0 + 896], 'a clock stepped back is followed too');
  });
});
