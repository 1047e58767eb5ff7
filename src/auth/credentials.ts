import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Compares a login against the one configured pair without leaking, through timing, how much of
 * either string matched or how long it is: both sides are reduced to HMAC digests of equal length
 * under a per-process random key, and both comparisons always run (decisions.md, "Authentication").
 */
export function createCredentialCheck(username: string, password: string): (user: string, pass: string) => boolean {
  const key = randomBytes(32);
  const digest = (text: string): Buffer => createHmac('sha256', key).update(text, 'utf8').digest();
  const expectedUser = digest(username);
  const expectedPass = digest(password);
  return (user, pass) => {
    const userOk = timingSafeEqual(digest(user), expectedUser);
    const passOk = timingSafeEqual(digest(pass), expectedPass);
    return userOk && passOk;
  };
}
