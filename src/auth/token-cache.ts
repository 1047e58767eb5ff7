import type { Claims } from './jwt.ts';

/** Verifies a token at `nowSeconds` and returns its claims, or throws (as `verifyToken`). */
export type TokenVerifier = (token: string, nowSeconds: number) => Claims;

/** Enough for every client of one service; a login issues one token per second at most per user. */
const TOKEN_CACHE_ENTRIES = 10_000;

/**
 * Remembers tokens the verifier accepted, keyed by the exact token string, until their `exp`, so
 * the HMAC is computed once per token rather than once per request (it was 11.8% of a read's CPU:
 * docs/performance.md, "Design choices and their measured effect"). Only an accepted
 * token enters; a remembered one is accepted only while `exp > now`, the verifier's own rule
 * (RFC 7519 §4.1.4), so the cache never accepts what the verifier would refuse: the keys are fixed
 * for the app's lifetime, and `nbf` (≤ now when verified) stays satisfied as time moves on.
 * Bounded: when full, the oldest entry goes (insertion order; every token lives 15 minutes, so
 * that is also the one that expires first).
 */
export class TokenCache {
  readonly #verify: TokenVerifier;
  readonly #maxEntries: number;
  /** token → exp (seconds). */
  readonly #expiries = new Map<string, number>();

  constructor(verify: TokenVerifier, maxEntries: number = TOKEN_CACHE_ENTRIES) {
    if (!(maxEntries >= 1)) throw new RangeError('a token cache holds at least one entry');
    this.#verify = verify;
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#expiries.size;
  }

  /** Returns the token's `exp` when it is valid at `nowSeconds`; throws whatever the verifier throws otherwise. */
  check(token: string, nowSeconds: number): number {
    const exp = this.#expiries.get(token);
    if (exp !== undefined) {
      if (exp > nowSeconds) return exp;
      this.#expiries.delete(token);
    }
    const claims = this.#verify(token, nowSeconds);
    if (this.#expiries.size >= this.#maxEntries) this.#expiries.delete(this.#expiries.keys().next().value as string);
    this.#expiries.set(token, claims.exp);
    return claims.exp;
  }
}
