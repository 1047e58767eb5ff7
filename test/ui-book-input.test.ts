import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedFields, readBook } from '../src/ui/page/book-input.ts';

describe("the page's reading of a book form (src/ui/page/book-input.ts, with the service's rule)", () => {
  it('a valid form is read as the fields POST /book takes, the year a number', () => {
    assert.deepEqual(readBook({ title: 'Dune', author: 'Frank Herbert', year: ' 1965 ' }), { fields: { title: 'Dune', author: 'Frank Herbert', year: 1965 } });
  });

  it('only a Title: Author and Year are named as missing, each with its rule', () => {
    assert.deepEqual(readBook({ title: 'Dune', author: '', year: '' }), {
      problems: {
        author: 'Author is missing: not blank, at most 1000 characters.',
        year: 'Year is missing: a whole number from -9999 to 9999.',
      },
    });
  });

  it('what the rule refuses is named as not valid: a blank title, 1001 characters, a lone surrogate, a fraction, 10000, a word', () => {
    const cases: [Record<'title' | 'author' | 'year', string>, string][] = [
      [{ title: '   ', author: 'A', year: '1' }, 'title'],
      [{ title: 'T', author: 'a'.repeat(1001), year: '1' }, 'author'],
      [{ title: 'Dune \ud83d', author: 'A', year: '1' }, 'title'],
      [{ title: 'T', author: 'A', year: '1965.5' }, 'year'],
      [{ title: 'T', author: 'A', year: '10000' }, 'year'],
      [{ title: 'T', author: 'A', year: 'MCMLXV' }, 'year'],
    ];
    for (const [typed, field] of cases) {
      const reading = readBook(typed);
      assert.ok('problems' in reading, JSON.stringify(typed));
      assert.deepEqual(Object.keys(reading.problems), [field], JSON.stringify(typed));
    }
    assert.match(JSON.stringify(readBook({ title: '   ', author: 'A', year: '1' })), /Title is missing: not blank/);
    assert.match(JSON.stringify(readBook({ title: 'T', author: 'A', year: '1965.5' })), /Year is not valid: a whole number from -9999 to 9999/);
  });

  it('a change sends only the fields that differ from the version the form started from', () => {
    const base = { title: 'Dune', author: 'Frank Herbert', year: 1965 };
    assert.deepEqual(changedFields(base, { ...base, title: 'Dune Messiah' }), { title: 'Dune Messiah' });
    assert.deepEqual(changedFields(base, base), {});
  });
});
