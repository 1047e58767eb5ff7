import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MAX_TOKEN_BYTES, signToken, TOKEN_LIFETIME_SECONDS, TokenError, verifyToken, type TokenFailure } from '../src/auth/jwt.ts';
import { b64url, handSignedToken, hmacSignature } from './helpers/token.ts';

const SECRET = 'unit-test-secret-of-at-least-32-bytes';
const KEY = Buffer.from(SECRET);
const NOW = 1_800_000_000;

const decode = (segment: string): unknown => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
const failsWith = (reason: TokenFailure) => (err: unknown) => err instanceof TokenError && err.reason === reason;

describe('signToken / verifyToken (docs/contract.md, "Tokens")', () => {
  it('round trip: a signed token verifies and yields its claims', () => {
    const claims = verifyToken(signToken('librarian', KEY, NOW), [KEY], NOW);
    assert.deepEqual(claims, { sub: 'librarian', iat: NOW, exp: NOW + 900 });
  });

  it('the header is exactly {"alg":"HS256","typ":"JWT"}, byte for byte', () => {
    const [header] = signToken('x', KEY, NOW).split('.') as [string];
    assert.equal(Buffer.from(header, 'base64url').toString('utf8'), '{"alg":"HS256","typ":"JWT"}');
  });

  it('claims are sub (the username), iat, and exp = iat + 900 (15 minutes)', () => {
    const [, payload] = signToken('admin', KEY, NOW + 0.75).split('.') as [string, string];
    assert.deepEqual(decode(payload), { sub: 'admin', iat: NOW, exp: NOW + 900 });
    assert.equal(TOKEN_LIFETIME_SECONDS, 900);
  });

  it('the signature is HMAC SHA-256 over header.payload, unpadded base64url', () => {
    const token = signToken('admin', KEY, NOW);
    const input = token.slice(0, token.lastIndexOf('.'));
    assert.equal(token.slice(token.lastIndexOf('.') + 1), hmacSignature(input, KEY));
    assert.doesNotMatch(token, /[=+/]/);
  });

  it('a hand-made HS256 token (node:crypto only) verifies', () => {
    const token = handSignedToken({ claims: { exp: NOW + 1 }, secret: SECRET });
    assert.deepEqual(verifyToken(token, [KEY], NOW), { exp: NOW + 1 });
  });

  it('the token is valid until exp, exclusive: exp - 1 passes, exp fails', () => {
    const token = signToken('a', KEY, NOW);
    verifyToken(token, [KEY], NOW + 899);
    assert.throws(() => verifyToken(token, [KEY], NOW + 900), failsWith('expired'));
  });

  it('a later key in the list verifies too (rotation), signing uses the key given', () => {
    const old = Buffer.from('previous-secret-of-at-least-32-bytes!!');
    verifyToken(signToken('a', old, NOW), [KEY, old], NOW);
    assert.throws(() => verifyToken(signToken('a', old, NOW), [KEY], NOW), failsWith('bad-signature'));
  });

  describe('each failure has its reason (for the log; clients see only Invalid token)', () => {
    const valid = signToken('a', KEY, NOW);
    const [h, p, s] = valid.split('.') as [string, string, string];
    const rows: { name: string; token: string; reason: TokenFailure }[] = [
      { name: 'over 8 KiB', token: 'a'.repeat(MAX_TOKEN_BYTES + 1), reason: 'too-large' },
      { name: 'two parts', token: `${h}.${p}`, reason: 'malformed' },
      { name: 'an empty header part', token: `.${p}.${s}`, reason: 'malformed' },
      { name: 'an empty payload part', token: `${h}..${s}`, reason: 'malformed' },
      { name: 'an empty signature part', token: `${h}.${p}.`, reason: 'malformed' },
      { name: 'four parts', token: `${valid}.x`, reason: 'malformed' },
      { name: 'padding', token: `${h}.${p}.${s}=`, reason: 'not-base64url' },
      { name: 'standard base64 characters', token: `${h}.${p}.${s.slice(0, -1)}+`, reason: 'not-base64url' },
      { name: 'non-zero trailing bits (non-canonical)', token: `${h}.${p}.${s.slice(0, -1)}${nonCanonicalLast(s)}`, reason: 'not-base64url' },
      { name: 'a header that is not JSON', token: `${b64url('{alg')}.${p}.${s}`, reason: 'bad-header' },
      { name: 'a header that is an array', token: `${b64url('["HS256"]')}.${p}.${s}`, reason: 'bad-header' },
      { name: 'alg none with an empty signature (an empty part comes first)', token: `${b64url('{"alg":"none","typ":"JWT"}')}.${p}.`, reason: 'malformed' },
      { name: 'alg none, every part well formed', token: `${b64url('{"alg":"none","typ":"JWT"}')}.${p}.${b64url('no signature')}`, reason: 'alg-not-allowed' },
      { name: 'alg none with the HMAC made with the key', token: handSignedToken({ header: { alg: 'none', typ: 'JWT' }, claims: { exp: NOW + 9 }, secret: SECRET }), reason: 'alg-not-allowed' },
      { name: 'alg HS512', token: handSignedToken({ header: { alg: 'HS512' }, claims: { exp: NOW + 9 }, secret: SECRET, hash: 'sha512' }), reason: 'alg-not-allowed' },
      { name: 'no alg', token: handSignedToken({ header: { typ: 'JWT' }, claims: { exp: NOW + 9 }, secret: SECRET }), reason: 'alg-not-allowed' },
      { name: 'a crit header', token: handSignedToken({ header: { alg: 'HS256', crit: ['x'] }, claims: { exp: NOW + 9 }, secret: SECRET }), reason: 'crit-present' },
      { name: 'a wrong signature', token: handSignedToken({ claims: { exp: NOW + 9 }, secret: 'another-secret' }), reason: 'bad-signature' },
      { name: 'a short signature', token: `${h}.${p}.${s.slice(0, 8)}`, reason: 'bad-signature' },
      { name: 'no exp', token: handSignedToken({ claims: { sub: 'a' }, secret: SECRET }), reason: 'bad-claims' },
      { name: 'exp as a string', token: handSignedToken({ claims: { exp: String(NOW + 9) }, secret: SECRET }), reason: 'bad-claims' },
      { name: 'claims that are not an object', token: handSignedToken({ claims: '42', secret: SECRET }), reason: 'bad-claims' },
      { name: 'exp in the past', token: handSignedToken({ claims: { exp: NOW - 1 }, secret: SECRET }), reason: 'expired' },
      { name: 'nbf in the future', token: handSignedToken({ claims: { exp: NOW + 9, nbf: NOW + 1 }, secret: SECRET }), reason: 'not-yet-valid' },
      { name: 'nbf not a number', token: handSignedToken({ claims: { exp: NOW + 9, nbf: 'x' }, secret: SECRET }), reason: 'bad-claims' },
    ];
    for (const row of rows) {
      it(`${row.reason} for ${row.name}`, () => {
        assert.throws(() => verifyToken(row.token, [KEY], NOW), failsWith(row.reason));
      });
    }
  });

  it('the signature is checked before the claims are trusted: a forged expired token is bad-signature, not expired', () => {
    const forged = handSignedToken({ claims: { exp: NOW - 100 }, secret: 'not-the-secret' });
    assert.throws(() => verifyToken(forged, [KEY], NOW), failsWith('bad-signature'));
  });
});

/** A last base64url character that decodes to the same bytes but is not the canonical one. */
function nonCanonicalLast(segment: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const index = alphabet.indexOf(segment.at(-1) as string);
  // 43 characters carry 258 bits for 256: the last character's 2 low bits must be zero.
  return alphabet[index ^ 1] as string;
}
