import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signToken, TokenError, verifyToken, type Claims } from '../src/auth/jwt.ts';
import { TokenCache, type TokenVerifier } from '../src/auth/token-cache.ts';
import { startApp, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';
import { openConnection, type RawConnection } from './helpers/raw.ts';
import { handSignedToken } from './helpers/token.ts';

const SECRET = 'token-cache-test-secret-of-32-bytes-or-more';
const KEY = Buffer.from(SECRET);
const OTHER_KEY = Buffer.from('a-different-secret-that-signed-nothing-here');
const T0 = 1_700_000_000;

/** The real verifier with the test key, counting how often the HMAC path runs. */
function countingVerifier(keys: readonly Uint8Array[] = [KEY]): { verify: TokenVerifier; calls: () => number } {
  let calls = 0;
  return {
    verify: (token, now) => {
      calls++;
      return verifyToken(token, keys, now);
    },
    calls: () => calls,
  };
}

describe('token cache', () => {
  it('a verified token is not verified again while exp is in the future', () => {
    const { verify, calls } = countingVerifier();
    const cache = new TokenCache(verify);
    const token = signToken('librarian', KEY, T0);
    cache.check(token, T0);
    cache.check(token, T0 + 1);
    cache.check(token, T0 + 899);
    assert.equal(calls(), 1);
  });

  it('a cached token is refused at its exp (Invalid token: expired), per the injected now', () => {
    const { verify, calls } = countingVerifier();
    const cache = new TokenCache(verify);
    const token = signToken('librarian', KEY, T0);
    cache.check(token, T0);
    assert.throws(() => cache.check(token, T0 + 900), (err: unknown) => err instanceof TokenError && err.reason === 'expired');
    assert.throws(() => cache.check(token, T0 + 5000), TokenError);
    assert.equal(calls(), 3);
  });

  it('at exp the cache asks the verifier again, even one that would accept anything', () => {
    let calls = 0;
    const cache = new TokenCache((): Claims => {
      calls++;
      return { exp: T0 + 10 };
    });
    cache.check('t', T0);
    cache.check('t', T0 + 9);
    assert.equal(calls, 1);
    cache.check('t', T0 + 10);
    assert.equal(calls, 2);
  });

  it('a token that fails verification never enters the cache', () => {
    const { verify, calls } = countingVerifier();
    const cache = new TokenCache(verify);
    const forged = signToken('librarian', OTHER_KEY, T0);
    for (let i = 0; i < 3; i++) {
      assert.throws(() => cache.check(forged, T0), (err: unknown) => err instanceof TokenError && err.reason === 'bad-signature');
    }
    assert.equal(calls(), 3);
    assert.equal(cache.size, 0);
  });

  it('a token not yet valid (nbf) is refused every time and never cached', () => {
    const { verify, calls } = countingVerifier();
    const cache = new TokenCache(verify);
    const token = handSignedToken({ claims: { exp: T0 + 900, nbf: T0 + 60 }, secret: SECRET });
    assert.throws(() => cache.check(token, T0), (err: unknown) => err instanceof TokenError && err.reason === 'not-yet-valid');
    assert.equal(cache.size, 0);
    cache.check(token, T0 + 60);
    cache.check(token, T0 + 61);
    assert.equal(calls(), 2);
  });

  it('keyed by the exact token string: another string is verified on its own', () => {
    const { verify, calls } = countingVerifier();
    const cache = new TokenCache(verify);
    const token = signToken('librarian', KEY, T0);
    cache.check(token, T0);
    assert.throws(() => cache.check(`${token}x`, T0), TokenError);
    assert.throws(() => cache.check(token.slice(0, -1), T0), TokenError);
    assert.equal(calls(), 3);
  });

  it('holds at most its bound; when full the oldest entry goes', () => {
    const { verify, calls } = countingVerifier();
    const cache = new TokenCache(verify, 3);
    const tokens = [0, 1, 2, 3].map((i) => signToken(`user${i}`, KEY, T0));
    for (const t of tokens) cache.check(t, T0);
    assert.equal(cache.size, 3);
    assert.equal(calls(), 4);
    cache.check(tokens[3] as string, T0);
    assert.equal(calls(), 4, 'the newest is still cached');
    cache.check(tokens[0] as string, T0);
    assert.equal(calls(), 5, 'the oldest was evicted and is verified again');
    assert.equal(cache.size, 3);
  });
});

/**
 * `token`, signed at T0, is answered 200 by `get` now and at the last millisecond before its exp,
 * then 401 Invalid token at exp; `setClock` moves the app's injected clock (ms) between the two.
 */
async function acceptedUntilExp(token: string, get: (authorization: string) => Promise<[number, string | undefined]>, setClock: (ms: number) => void): Promise<void> {
  assert.deepEqual(await get(token), [200, 'Books retrieved successfully']);
  setClock((T0 + 899) * 1000 + 999);
  assert.deepEqual(await get(token), [200, 'Books retrieved successfully']);
  setClock((T0 + 900) * 1000);
  assert.deepEqual(await get(token), [401, 'Invalid token']);
}

describe('token cache in the service: GET /books with one token as the injected clock moves', () => {
  let app: TestApp;
  let clockMs = T0 * 1000;
  const token = signToken(TEST_USER, Buffer.from(TEST_SECRET), T0);
  const get = async (authorization: string): Promise<[number, string]> => {
    const res = await app.request('GET', '/books', { headers: { authorization } });
    return [res.status, res.json.message];
  };
  before(async () => {
    app = await startApp({ now: () => clockMs, logLevel: 'silent' });
  });
  after(() => app.close());

  it('200 while exp is in the future, then 401 Invalid token from the second exp is reached', async () => {
    await acceptedUntilExp(token, get, (ms) => (clockMs = ms));
  });

  it('401 Invalid token every time for a token signed with another secret', async () => {
    clockMs = T0 * 1000;
    const forged = signToken(TEST_USER, OTHER_KEY, T0);
    assert.deepEqual(await get(forged), [401, 'Invalid token']);
    assert.deepEqual(await get(forged), [401, 'Invalid token']);
  });
});

describe('one keep-alive connection: each request is held to its own token as the injected clock moves', () => {
  let app: TestApp;
  let conn: RawConnection;
  let clockMs = T0 * 1000;
  const token = signToken(TEST_USER, Buffer.from(TEST_SECRET), T0);
  const get = async (authorization: string | undefined): Promise<[number, string | undefined]> => {
    const header = authorization === undefined ? '' : `Authorization: ${authorization}\r\n`;
    conn.write(`GET /books HTTP/1.1\r\nHost: localhost\r\n${header}\r\n`);
    const res = await conn.response();
    return [res.status, res.json?.message];
  };
  before(async () => {
    app = await startApp({ now: () => clockMs, logLevel: 'silent' });
    conn = await openConnection(app.port);
  });
  after(async () => {
    conn.destroy();
    await app.close();
  });

  it('a token accepted on the connection is refused on it from its exp on', async () => {
    await acceptedUntilExp(token, get, (ms) => (clockMs = ms));
  });

  it('after a token was accepted, another header on the same connection is checked on its own: forged, blank, absent', async () => {
    clockMs = T0 * 1000;
    assert.deepEqual(await get(token), [200, 'Books retrieved successfully']);
    assert.deepEqual(await get(signToken(TEST_USER, OTHER_KEY, T0)), [401, 'Invalid token']);
    assert.deepEqual(await get(`Bearer ${token}x`), [401, 'Invalid token']);
    assert.deepEqual(await get(undefined), [401, 'Authorization token required']);
    assert.deepEqual(await get('Bearer'), [401, 'Authorization token required']);
    assert.deepEqual(await get(`Bearer ${token}`), [200, 'Books retrieved successfully'], 'the same token in another spelling');
    assert.deepEqual(await get(token), [200, 'Books retrieved successfully']);
  });
});
