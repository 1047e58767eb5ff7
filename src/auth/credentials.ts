import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Compares a login against the one configured pair without leaking, through timing, how much of
 * either string matched or how long it is: both sides are reduced to SHA-256 digests of equal
 * length, compared in constant time, and both comparisons always run (decisions.md,
 * "Authentication"). No key is needed: a digest's timing depends only on the attacker's own input,
 * and the comparison never exits early. A one-shot hash costs ~1.4 µs against ~3.5 µs for an HMAC.
 */
export function createCredentialCheck(username: string, password: string): (user: string, pass: string) => boolean {
  const digest = (text: string): Buffer => hash('sha256', text, 'buffer');
  const expectedUser = digest(username);
  const expectedPass = digest(password);
  return (user, pass) => {
    const userOk = timingSafeEqual(digest(user), expectedUser);
    const passOk = timingSafeEqual(digest(pass), expectedPass);
    return userOk && passOk;
  };
}
