/**
 * The pair as one string that identifies it: the username's length first, so where one string ends
 * and the other starts is never ambiguous (`ab` + `c` is not `a` + `bc`). Compared as UTF-16 code
 * units, so strings that UTF-8 would make equal (a lone surrogate and U+FFFD) stay different.
 */
function pairText(username: string, password: string): string {
  return `${username.length}:${username}${password}`;
}

/** The configured pair is kept padded to at least this many code units (a power of two). */
const MIN_TABLE_UNITS = 64;

/**
 * Compares a login against the one configured pair without leaking, through timing, how much of
 * either string matched or how long the configured strings are (docs/contract.md, "Logins"): every
 * code unit of the login's pair is compared, with no branch on its value, against the configured
 * pair's unit at the same place, read from a zero-padded table of a power-of-two size through a
 * mask (no read depends on the configured length), and a length difference counts as a difference.
 * What a comparison costs depends on the login's own length alone. In plain JavaScript rather than a
 * SHA-256 of the pair and `timingSafeEqual`, which cost ~0.8 µs more per login
 * (docs/performance.md, "Where the microseconds go").
 */
export function createCredentialCheck(username: string, password: string): (user: string, pass: string) => boolean {
  const expected = pairText(username, password);
  let size = MIN_TABLE_UNITS;
  while (size <= expected.length) size *= 2;
  const table = new Uint16Array(size);
  for (let i = 0; i < expected.length; i++) table[i] = expected.charCodeAt(i);
  const mask = size - 1;
  const length = expected.length;
  return (user, pass) => {
    const given = pairText(user, pass);
    let diff = given.length ^ length;
    for (let i = 0; i < given.length; i++) diff |= given.charCodeAt(i) ^ (table[i & mask] as number);
    return diff === 0;
  };
}
