import { createHmac, timingSafeEqual } from 'node:crypto';

/** docs/contract.md, "Tokens": tokens over 8 KiB are refused before any decoding. */
export const MAX_TOKEN_BYTES = 8 * 1024;

/** docs/contract.md, "Tokens": exp is 15 minutes after issue. */
export const TOKEN_LIFETIME_SECONDS = 15 * 60;

/** A verified token's claims: `exp` always, `sub` and `iat` as this service signs them. */
export interface Claims {
  readonly [claim: string]: unknown;
  readonly exp: number;
}

export type TokenFailure =
  | 'too-large'
  | 'malformed'
  | 'not-base64url'
  | 'bad-header'
  | 'alg-not-allowed'
  | 'crit-present'
  | 'bad-signature'
  | 'bad-claims'
  | 'expired'
  | 'not-yet-valid';

/** Why a token was refused, for the server log only; clients always see `Invalid token`. */
export class TokenError extends Error {
  readonly reason: TokenFailure;
  constructor(reason: TokenFailure) {
    super(`token rejected: ${reason}`);
    this.name = 'TokenError';
    this.reason = reason;
  }
}

const HEADER_SEGMENT = base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}

/** HS256 over `header.payload` (RFC 7515 §5.1, RFC 7518 §3.2). */
function sign(signingInput: string, key: Uint8Array): Buffer {
  return createHmac('sha256', key).update(signingInput).digest();
}

/** Issues `{sub, iat, exp = iat + 900}` with the fixed header `{"alg":"HS256","typ":"JWT"}`. */
export function signToken(subject: string, key: Uint8Array, nowSeconds: number): string {
  const iat = Math.floor(nowSeconds);
  const payload = base64url(JSON.stringify({ sub: subject, iat, exp: iat + TOKEN_LIFETIME_SECONDS }));
  const input = `${HEADER_SEGMENT}.${payload}`;
  return `${input}.${sign(input, key).toString('base64url')}`;
}

/**
 * Decodes one segment only if it is canonical unpadded base64url (RFC 7515 §2): the alphabet
 * check refuses padding and foreign characters, the round trip refuses non-zero trailing bits.
 */
function decodeSegment(segment: string): Buffer {
  for (let i = 0; i < segment.length; i++) {
    const c = segment.charCodeAt(i);
    const ok =
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 /* - */ || c === 95; /* _ */
    if (!ok) throw new TokenError('not-base64url');
  }
  const bytes = Buffer.from(segment, 'base64url');
  if (bytes.toString('base64url') !== segment) throw new TokenError('not-base64url');
  return bytes;
}

function parseObject(bytes: Buffer, failure: TokenFailure): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new TokenError(failure);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TokenError(failure);
  return value as Record<string, unknown>;
}

/**
 * Verifies in jose's order, so nothing from the token is trusted before its signature is:
 * size → three non-empty parts → canonical base64url → header pinned to HS256 without `crit`
 * (RFC 8725 §3.1: the verifier picks the algorithm) → constant-time HMAC against each key →
 * only then the claims: numeric `exp` > now, `nbf` ≤ now when present (RFC 7519 §4.1.4–5).
 * `keys` holds the current secret first; later entries verify only (key rotation).
 */
export function verifyToken(token: string, keys: readonly Uint8Array[], nowSeconds: number): Claims {
  if (token.length > MAX_TOKEN_BYTES) throw new TokenError('too-large');
  const dot1 = token.indexOf('.');
  const dot2 = dot1 === -1 ? -1 : token.indexOf('.', dot1 + 1);
  if (dot1 <= 0 || dot2 === -1 || dot2 === dot1 + 1 || dot2 === token.length - 1 || token.indexOf('.', dot2 + 1) !== -1) {
    throw new TokenError('malformed');
  }
  const headerBytes = decodeSegment(token.slice(0, dot1));
  const payloadBytes = decodeSegment(token.slice(dot1 + 1, dot2));
  const signature = decodeSegment(token.slice(dot2 + 1));

  const header = parseObject(headerBytes, 'bad-header');
  if (header.alg !== 'HS256') throw new TokenError('alg-not-allowed');
  if (Object.hasOwn(header, 'crit')) throw new TokenError('crit-present');

  const input = token.slice(0, dot2);
  let valid = false;
  for (const key of keys) {
    const expected = sign(input, key);
    // timingSafeEqual needs equal lengths; the length of an HMAC-SHA256 is public knowledge.
    if (signature.length === expected.length && timingSafeEqual(signature, expected)) valid = true;
  }
  if (!valid) throw new TokenError('bad-signature');

  const claims = parseObject(payloadBytes, 'bad-claims');
  const { exp, nbf } = claims;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new TokenError('bad-claims');
  if (!(exp > nowSeconds)) throw new TokenError('expired');
  if (nbf !== undefined) {
    if (typeof nbf !== 'number' || !Number.isFinite(nbf)) throw new TokenError('bad-claims');
    if (nbf > nowSeconds) throw new TokenError('not-yet-valid');
  }
  return claims as Claims;
}
