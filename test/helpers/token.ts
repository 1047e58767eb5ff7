import { createHmac } from 'node:crypto';

/**
 * Builds a JWT by hand with node:crypto alone, independent of src/auth/jwt.ts, so tests prove the
 * service accepts what any HS256 implementation produces and refuses the rest.
 */
export function b64url(value: string | Uint8Array): string {
  return Buffer.from(value).toString('base64url');
}

export interface HandTokenParts {
  header?: Record<string, unknown>;
  /** An object, or JSON text sent exactly as given. */
  claims?: Record<string, unknown> | string;
  secret: string;
  /** HMAC hash; 'sha256' unless the test wants a wrong algorithm's signature. */
  hash?: string;
}

export function handSignedToken({ header = { alg: 'HS256', typ: 'JWT' }, claims = {}, secret, hash = 'sha256' }: HandTokenParts): string {
  const input = `${b64url(JSON.stringify(header))}.${b64url(typeof claims === 'string' ? claims : JSON.stringify(claims))}`;
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
}

/** Claims valid for 15 minutes from `nowSeconds` (docs/contract.md, "Tokens"). */
export function freshClaims(nowSeconds = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return { sub: 'librarian', iat: nowSeconds, exp: nowSeconds + 900 };
}
