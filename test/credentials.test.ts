import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCredentialCheck } from '../src/auth/credentials.ts';

describe('credential check (docs/contract.md, "Logins")', () => {
  const check = createCredentialCheck('librarian', 'pässwörd 🔑');
  const rows: { name: string; user: string; pass: string; ok: boolean }[] = [
    { name: 'the configured pair matches', user: 'librarian', pass: 'pässwörd 🔑', ok: true },
    { name: 'a wrong password does not', user: 'librarian', pass: 'pässwörd', ok: false },
    { name: 'a wrong username does not', user: 'Librarian', pass: 'pässwörd 🔑', ok: false },
    { name: 'both wrong do not', user: 'x', pass: 'y', ok: false },
    { name: 'a longer password with the right prefix does not', user: 'librarian', pass: 'pässwörd 🔑!', ok: false },
    { name: 'the pair swapped does not', user: 'pässwörd 🔑', pass: 'librarian', ok: false },
    { name: 'empty strings do not', user: '', pass: '', ok: false },
    { name: 'the boundary moved between the two strings does not', user: 'librarianp', pass: 'ässwörd 🔑', ok: false },
    { name: 'the password followed by NULs (what the padded pair holds after it) does not', user: 'librarian', pass: 'pässwörd 🔑\u0000\u0000', ok: false },
    { name: 'a pair longer than the padded table, starting with the right one, does not', user: 'librarian', pass: `pässwörd 🔑${'\u0000'.repeat(200)}`, ok: false },
  ];
  for (const row of rows) it(row.name, () => assert.equal(check(row.user, row.pass), row.ok));

  it('an empty configured password matches only the empty string', () => {
    const empty = createCredentialCheck('u', '');
    assert.equal(empty('u', ''), true);
    assert.equal(empty('u', ' '), false);
  });

  it('configured strings longer than the padded table still match only themselves', () => {
    const long = createCredentialCheck('u'.repeat(100), 'p'.repeat(300));
    assert.equal(long('u'.repeat(100), 'p'.repeat(300)), true);
    assert.equal(long('u'.repeat(100), `${'p'.repeat(299)}q`), false);
    assert.equal(long('u'.repeat(100), 'p'.repeat(299)), false);
    assert.equal(long('u'.repeat(100), 'p'.repeat(300 + 512)), false);
  });

  it('a lone surrogate does not stand in for U+FFFD (UTF-8 would encode both as EF BF BD)', () => {
    const replacement = createCredentialCheck('u\uFFFD', 'p\uFFFD');
    assert.equal(replacement('u\uFFFD', 'p\uFFFD'), true);
    assert.equal(replacement('u\uD800', 'p\uFFFD'), false);
    assert.equal(replacement('u\uFFFD', 'p\uDC00'), false);
  });
});
