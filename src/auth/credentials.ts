import { hash, timingSafeEqual } from 'node:crypto';

/**
 * The pair as bytes that identify it: the username's length first, so where one string ends and
 * the other starts is never ambiguous (`ab` + `c` is not `a` + `bc`), and UTF-16 code units, so
 * strings that UTF-8 would make equal (a lone surrogate and U+FFFD) stay different.
 */
function pairBytes(username: string, password: string): Buffer {
  return Buffer.from(`${username.length}:${username}${password}`, 'utf16le');
}

/**
 * Compares a login against the one configured pair without leaking, through timing, how much of
 * either string matched or how long it is: the pair is reduced to a SHA-256 digest of fixed length
 * and compared in constant time, so there is no early exit on a wrong byte or a length difference
 * (docs/contract.md, "Logins"). No key is needed: a digest's timing depends only on the
 * attacker's own input. One digest of both strings, not one each: cheaper (docs/performance.md, "Design choices and their measured effect").
 */
export function createCredentialCheck(username: string, password: string): (user: string, pass: string) => boolean {
  const expected = digest(username, password);
  return (user, pass) => timingSafeEqual(digest(user, pass), expected);
}

/**
 * The pair's SHA-256 digest as bytes. Taken as `binary` (latin1) text, one character per byte, and
 * made a Buffer here: Node 20's `hash(…, 'buffer')` costs about 1.0 µs against 0.44 µs this way
 * (docs/performance.md, "Where the microseconds go"); the bytes are the same.
 */
function digest(username: string, password: string): Buffer {
  return Buffer.from(hash('sha256', pairBytes(username, password), 'binary'), 'latin1');
}
