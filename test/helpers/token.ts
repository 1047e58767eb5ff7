import { createHmac } from 'node:crypto';

/*
 * JWTs built and checked by hand with node:crypto alone, independent of src/auth/jwt.ts, so tests
 * prove the service accepts what any HS256 implementation produces and refuses the rest: no bug
 * in the service's own signing can hide itself by building the test's tokens too.
 */

export function b64url(value: string | Uint8Array): string {
  return Buffer.from(value).toString('base64url');
}

/** The HMAC of `input` (the `header.payload` text) as a base64url signature segment. */
export function hmacSignature(input: string, secret: string | Uint8Array, hash = 'sha256'): string {
  return createHmac(hash, secret).update(input).digest('base64url');
}

export interface HandTokenParts {
  /** Any JSON value (attacks send arrays, strings, null); `{"alg":"HS256","typ":"JWT"}` unless given. */
  header?: unknown;
  /** Any JSON value, or a string: JSON text sent exactly as given. */
  claims?: unknown;
  /** Segments used as they are, instead of encoding `header` / `claims`. */
  headerSegment?: string;
  claimsSegment?: string;
  secret: string | Uint8Array;
  /** HMAC hash; 'sha256' unless the test wants a wrong algorithm's signature. */
  hash?: string;
}

export function handSignedToken(parts: HandTokenParts): string {
  const { header = { alg: 'HS256', typ: 'JWT' }, claims = {}, secret, hash = 'sha256' } = parts;
  const headerSegment = parts.headerSegment ?? b64url(JSON.stringify(header));
  const claimsSegment = parts.claimsSegment ?? b64url(typeof claims === 'string' ? claims : JSON.stringify(claims));
  const input = `${headerSegment}.${claimsSegment}`;
  return `${input}.${hmacSignature(input, secret, hash)}`;
}

/** Whether `token`'s signature is HS256 over its own `header.payload` with `secret`. */
export function signedWith(token: string, secret: string | Uint8Array): boolean {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  return hmacSignature(`${header}.${payload}`, secret) === signature;
}

/** Claims valid for 15 minutes from `nowSeconds` (docs/contract.md, "Tokens"). */
export function freshClaims(nowSeconds = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return { sub: 'librarian', iat: nowSeconds, exp: nowSeconds + 900 };
}
