import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_SECRET, TEST_USER, TEST_PASSWORD, tokenRejections, type TestApp } from './helpers/app.ts';
import type { TokenFailure } from '../src/auth/jwt.ts';
import { b64url, handSignedToken, hmacSignature, type HandTokenParts } from './helpers/token.ts';

/* An attacker's JWT toolbox, on the hand-signing helper (node:crypto alone, not src/auth/jwt.ts). */
const NOW = 1_900_000_000;
const OTHER_SECRET = 'another-secret-that-is-also-32-bytes-long!!';

const json = (value: unknown): string => b64url(JSON.stringify(value));

/** Signed with the app's secret and valid claims unless the attack says otherwise. */
function forge(options: Partial<HandTokenParts> = {}): string {
  return handSignedToken({ claims: { sub: TEST_USER, iat: NOW, exp: NOW + 900 }, secret: TEST_SECRET, ...options });
}

const [GOOD_H, GOOD_P, GOOD_S] = forge().split('.') as [string, string, string];

/** A valid token whose signature segment contains `-` or `_` (so it has a standard-base64 twin). */
function tokenWithUrlSafeSignature(): string {
  for (let iat = NOW; ; iat++) {
    const token = forge({ claims: { sub: TEST_USER, iat, exp: NOW + 900 } });
    if (/[-_]/.test(token.split('.')[2] as string)) return token;
  }
}

/** Claims whose base64url segment needs padding, so an `=` can be appended. */
function claimsNeedingPadding(): string {
  for (let n = 0; ; n++) {
    const segment = json({ sub: TEST_USER, exp: NOW + 900, n: 'x'.repeat(n) });
    if (segment.length % 4 !== 0) return segment;
  }
}

/** Same bytes, other text: the unused low bits of the last character set (RFC 4648 §3.5). */
function nonCanonicalTail(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(segment.at(-1) as string);
  const twin = segment.slice(0, -1) + (alphabet[last + 1] as string);
  assert.deepEqual(Buffer.from(twin, 'base64url'), Buffer.from(segment, 'base64url'), 'the twin must decode to the same bytes');
  return twin;
}

/** The largest correctly signed token not over `limit` characters, and the smallest over it. */
function tokensAround(limit: number): { under: string; over: string } {
  let under = '';
  for (let n = Math.floor((limit * 3) / 4) - 200; ; n++) {
    const token = forge({ claims: { sub: TEST_USER, exp: NOW + 900, pad: 'x'.repeat(n) } });
    if (token.length > limit) return { under, over: token };
    under = token;
  }
}

const claimsPadded = claimsNeedingPadding();
const AROUND_8_KIB = tokensAround(8 * 1024);
const urlSafe = tokenWithUrlSafeSignature();
const [US_H, US_P, US_S] = urlSafe.split('.') as [string, string, string];

const ATTACKS: { name: string; token: string; reason: TokenFailure }[] = [
  { name: 'alg is none with an empty signature (an empty part: refused before alg is read)', token: `${json({ alg: 'none', typ: 'JWT' })}.${GOOD_P}.`, reason: 'malformed' },
  { name: 'alg is none with no signature segment (two parts: refused before alg is read)', token: `${json({ alg: 'none' })}.${GOOD_P}`, reason: 'malformed' },
  { name: 'alg is none with a signature that is no HMAC', token: `${json({ alg: 'none', typ: 'JWT' })}.${GOOD_P}.${b64url('no signature')}`, reason: 'alg-not-allowed' },
  { name: 'alg is none with a signature made with the secret', token: forge({ header: { alg: 'none', typ: 'JWT' } }), reason: 'alg-not-allowed' },
  { name: 'alg is None in other case', token: forge({ header: { alg: 'None' } }), reason: 'alg-not-allowed' },
  { name: 'alg is hs256 in lower case', token: forge({ header: { alg: 'hs256', typ: 'JWT' } }), reason: 'alg-not-allowed' },
  { name: 'alg is HS384 signed with the right secret', token: forge({ header: { alg: 'HS384', typ: 'JWT' }, hash: 'sha384' }), reason: 'alg-not-allowed' },
  { name: 'alg is HS512 signed with the right secret', token: forge({ header: { alg: 'HS512', typ: 'JWT' }, hash: 'sha512' }), reason: 'alg-not-allowed' },
  { name: 'alg is RS256 carrying an HMAC made with the secret', token: forge({ header: { alg: 'RS256', typ: 'JWT' } }), reason: 'alg-not-allowed' },
  { name: 'alg is ES256 carrying an HMAC made with the secret', token: forge({ header: { alg: 'ES256', typ: 'JWT' } }), reason: 'alg-not-allowed' },
  { name: 'alg is missing', token: forge({ header: { typ: 'JWT' } }), reason: 'alg-not-allowed' },
  { name: 'the header carries the attacker’s own key (jwk) and is signed with it', token: forge({ header: { alg: 'HS256', jwk: { kty: 'oct', k: b64url(OTHER_SECRET) } }, secret: OTHER_SECRET }), reason: 'bad-signature' },
  { name: 'the payload was tampered with after signing', token: `${GOOD_H}.${json({ sub: 'admin', iat: NOW, exp: NOW + 900 })}.${GOOD_S}`, reason: 'bad-signature' },
  { name: 'the signature was made with another secret', token: forge({ secret: OTHER_SECRET }), reason: 'bad-signature' },
  { name: 'the signature is truncated', token: `${GOOD_H}.${GOOD_P}.${GOOD_S.slice(0, 42)}`, reason: 'not-base64url' },
  { name: 'exp is in the past', token: forge({ claims: { sub: TEST_USER, exp: NOW - 1 } }), reason: 'expired' },
  { name: 'exp equals now (no leeway)', token: forge({ claims: { sub: TEST_USER, exp: NOW } }), reason: 'expired' },
  { name: 'exp is missing', token: forge({ claims: { sub: TEST_USER, iat: NOW } }), reason: 'bad-claims' },
  { name: 'exp is a string', token: forge({ claims: { sub: TEST_USER, exp: String(NOW + 900) } }), reason: 'bad-claims' },
  { name: 'exp is NaN', token: forge({ claimsSegment: b64url(`{"sub":"${TEST_USER}","exp":NaN}`) }), reason: 'bad-claims' },
  { name: 'exp is null', token: forge({ claims: { sub: TEST_USER, exp: null } }), reason: 'bad-claims' },
  { name: 'exp overflows to Infinity', token: forge({ claimsSegment: b64url(`{"sub":"${TEST_USER}","exp":1e400}`) }), reason: 'bad-claims' },
  { name: 'nbf is in the future', token: forge({ claims: { sub: TEST_USER, exp: NOW + 900, nbf: NOW + 60 } }), reason: 'not-yet-valid' },
  { name: 'nbf is a string', token: forge({ claims: { sub: TEST_USER, exp: NOW + 900, nbf: String(NOW) } }), reason: 'bad-claims' },
  { name: 'a crit header is present', token: forge({ header: { alg: 'HS256', typ: 'JWT', crit: ['exp'] } }), reason: 'crit-present' },
  { name: 'an empty crit header is present', token: forge({ header: { alg: 'HS256', crit: [] } }), reason: 'crit-present' },
  { name: 'the payload segment is padded with =', token: forge({ claimsSegment: `${claimsPadded}${'='.repeat(4 - (claimsPadded.length % 4))}` }), reason: 'not-base64url' },
  { name: 'the signature is padded with =', token: `${GOOD_H}.${GOOD_P}.${GOOD_S}=`, reason: 'not-base64url' },
  { name: 'the signature uses standard base64 + and /', token: `${US_H}.${US_P}.${US_S.replaceAll('-', '+').replaceAll('_', '/')}`, reason: 'not-base64url' },
  { name: 'the signature’s last character has non-zero unused bits', token: `${GOOD_H}.${GOOD_P}.${nonCanonicalTail(GOOD_S)}`, reason: 'not-base64url' },
  { name: 'the payload’s last character has non-zero unused bits', token: forge({ claimsSegment: nonCanonicalTail(claimsPadded) }), reason: 'not-base64url' },
  { name: 'a segment holds a character outside base64url', token: forge({ claimsSegment: `${GOOD_P.slice(0, -1)}*` }), reason: 'not-base64url' },
  { name: 'the token has 2 segments', token: `${GOOD_H}.${GOOD_P}`, reason: 'malformed' },
  { name: 'the token has 4 segments', token: `${GOOD_H}.${GOOD_P}.${GOOD_S}.${GOOD_S}`, reason: 'malformed' },
  { name: 'the header segment is empty', token: `.${GOOD_P}.${GOOD_S}`, reason: 'malformed' },
  { name: 'the payload segment is empty', token: forge({ claimsSegment: '' }), reason: 'malformed' },
  { name: 'the signature segment is empty', token: `${GOOD_H}.${GOOD_P}.`, reason: 'malformed' },
  { name: 'the token is only dots', token: '..', reason: 'malformed' },
  { name: 'the header is a JSON array', token: forge({ header: ['HS256'] }), reason: 'bad-header' },
  { name: 'the header is a JSON string', token: forge({ header: 'HS256' }), reason: 'bad-header' },
  { name: 'the header is null', token: forge({ header: null }), reason: 'bad-header' },
  { name: 'the header is not JSON', token: forge({ headerSegment: b64url('{alg:HS256}') }), reason: 'bad-header' },
  { name: 'the payload is a JSON array', token: forge({ claims: [{ exp: NOW + 900 }] }), reason: 'bad-claims' },
  { name: 'the payload is a JSON number', token: forge({ claims: NOW + 900 }), reason: 'bad-claims' },
  { name: 'the payload is not JSON', token: forge({ claimsSegment: b64url('exp=1900000900') }), reason: 'bad-claims' },
  { name: 'the payload is not UTF-8 JSON', token: forge({ claimsSegment: b64url(Buffer.from([0xff, 0xfe, 0x7b, 0x7d])) }), reason: 'bad-claims' },
  { name: 'the token is over 8 KiB', token: AROUND_8_KIB.over, reason: 'too-large' },
  { name: 'the token is 12 KiB of dots', token: '.'.repeat(12 * 1024), reason: 'too-large' },
];

describe('JWT attack matrix: every forged token answers 401 Invalid token', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ now: () => NOW * 1000 });
  });
  after(() => app.close());

  let requests = 0;
  /** 401 Invalid token, refused by the check `reason` names (the debug log says which; clients see one message). */
  const expectInvalid = async (authorization: string, reason: TokenFailure): Promise<void> => {
    const reqId = `attack-${++requests}`;
    const res = await app.request('GET', '/books', { headers: { authorization, 'x-request-id': reqId } });
    assert.deepEqual({ status: res.status, json: res.json }, { status: 401, json: { status: 401, message: 'Invalid token', data: null } });
    assert.deepEqual(tokenRejections(app, reqId), [reason]);
  };

  for (const attack of ATTACKS) {
    it(`401 Invalid token when ${attack.name} (${attack.reason})`, async () => {
      assert.notEqual(attack.token, '', 'the row must build a token');
      await expectInvalid(attack.token, attack.reason);
      await expectInvalid(`Bearer ${attack.token}`, attack.reason);
    });
  }

  it('401 Invalid token for a Basic authorization carrying the right credentials', async () => {
    await expectInvalid(`Basic ${b64url(`${TEST_USER}:${TEST_PASSWORD}`)}`, 'malformed');
  });

  it('the largest token not over 8 KiB is accepted (the cap is not off by one)', async () => {
    const token = AROUND_8_KIB.under;
    assert.ok(token.length > 8 * 1024 - 4, `token of ${token.length} characters`);
    assert.equal((await app.request('GET', '/books', { headers: { authorization: token } })).status, 200);
  });

  // Each row's token is its own (a jti tells them apart): a token already verified is answered
  // from the cache, so a row reusing another's would not be verified at all.
  const own = (jti: string): string => forge({ claims: { sub: TEST_USER, iat: NOW, exp: NOW + 900, jti } });
  for (const [name, authorization] of [
    ['the bare token (docs/contract.md, "Authentication")', own('bare')],
    ['Bearer <token>', `Bearer ${own('Bearer')}`],
    ['bearer <token>', `bearer ${own('bearer')}`],
    ['BEARER <token>', `BEARER ${own('BEARER')}`],
  ] as const) {
    it(`200 for a token signed by an independent createHmac implementation, sent as ${name}`, async () => {
      const res = await app.request('GET', '/books', { headers: { authorization } });
      assert.deepEqual(res.json, { status: 200, message: 'Books retrieved successfully', data: [] });
    });
  }

  it('a token from POST /token verifies with the independent implementation', async () => {
    const res = await app.request('POST', '/token', { auth: false, body: { username: TEST_USER, password: TEST_PASSWORD } });
    const token = (res.json.data as { token: string }).token;
    const [h, p, s] = token.split('.') as [string, string, string];
    assert.deepEqual(JSON.parse(Buffer.from(h, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
    assert.equal(s, hmacSignature(`${h}.${p}`, TEST_SECRET));
    assert.deepEqual(JSON.parse(Buffer.from(p, 'base64url').toString()), { sub: TEST_USER, iat: NOW, exp: NOW + 900 });
  });
});

describe('key rotation: SECRET_TOKEN_PREVIOUS verifies, never signs', () => {
  const PREVIOUS = 'the-secret-being-rotated-out-32-bytes-long!';
  let rotating: TestApp;
  let plain: TestApp;
  before(async () => {
    rotating = await startApp({ now: () => NOW * 1000, logLevel: 'silent', previousSecret: PREVIOUS });
    plain = await startApp({ now: () => NOW * 1000, logLevel: 'silent' });
  });
  after(async () => {
    await rotating.close();
    await plain.close();
  });

  const status = async (app: TestApp, authorization: string): Promise<number> =>
    (await app.request('GET', '/books', { headers: { authorization } })).status;

  it('200 for a token signed with the previous secret', async () => {
    assert.equal(await status(rotating, forge({ secret: PREVIOUS })), 200);
  });

  it('200 for a token signed with the current secret', async () => {
    assert.equal(await status(rotating, forge()), 200);
  });

  it('401 Invalid token for a token signed with neither', async () => {
    assert.equal(await status(rotating, forge({ secret: OTHER_SECRET })), 401);
  });

  it('401 Invalid token for an expired token signed with the previous secret', async () => {
    assert.equal(await status(rotating, forge({ secret: PREVIOUS, claims: { exp: NOW - 1 } })), 401);
  });

  it('401 Invalid token for a previous-secret token when no previous secret is configured', async () => {
    assert.equal(await status(plain, forge({ secret: PREVIOUS })), 401);
  });

  it('POST /token signs with the current secret only', async () => {
    const res = await rotating.request('POST', '/token', { auth: false, body: { username: TEST_USER, password: TEST_PASSWORD } });
    const token = (res.json.data as { token: string }).token;
    const [h, p, s] = token.split('.') as [string, string, string];
    assert.equal(s, hmacSignature(`${h}.${p}`, TEST_SECRET));
    assert.equal(await status(plain, token), 200);
  });
});
