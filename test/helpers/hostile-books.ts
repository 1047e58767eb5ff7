/**
 * The hostile-input table for books: every value here is refused by POST /book, and the same rows
 * are refused by writeCatalogue and import (test/valid-book-everywhere.test.ts), since all three
 * use the one rule in src/model/valid-book.ts.
 */
export const EMOJI = '📚'; // one code point, two UTF-16 units
export const VALID = { title: 'Dune', author: 'Frank Herbert', year: 1965 };

/** Field values that break the rules of docs/contract.md, "Books" (JSON text, so 1e400 and 2020.5 stay as written). */
export const BAD_TEXT: [string, string][] = [
  ['missing', ''],
  ['null', 'null'],
  ['a number', '42'],
  ['a boolean', 'true'],
  ['an array', '["Dune"]'],
  ['an object', '{"text":"Dune"}'],
  ['empty', '""'],
  ['blank spaces', '"   "'],
  ['blank tabs and newlines', '"\\t\\n\\r"'],
  ['blank no-break space and ideographic space (trim() removes them)', '"\\u00a0\\u3000"'],
  ['1001 characters', JSON.stringify('a'.repeat(1001))],
  ['1001 emoji code points', JSON.stringify(EMOJI.repeat(1001))],
  // RFC 8259 §8.2: not valid Unicode text (jq refuses it), so refused wherever a book is accepted.
  ['a lone high surrogate', '"\\ud800"'],
  ['a lone low surrogate', '"\\udc00"'],
  ['a high surrogate at the end', '"Dune \\ud83d"'],
  ['a surrogate pair in the wrong order', '"\\ude00\\ud83d"'],
];
export const BAD_YEAR: [string, string][] = [
  ['missing', ''],
  ['null', 'null'],
  ['a string', '"1965"'],
  ['a boolean', 'false'],
  ['an array', '[1965]'],
  ['a fraction 1965.5', '1965.5'],
  ['10000', '10000'],
  ['-10000', '-10000'],
  ['1e4', '1e4'],
  ['1e400 (infinite)', '1e400'],
];

/** A POST body (JSON text) with one field replaced by `value` JSON, or left out when ''. */
export function bodyWith(field: 'title' | 'author' | 'year', value: string): string {
  const parts = Object.entries(VALID)
    .filter(([k]) => k !== field || value !== '')
    .map(([k, v]) => `"${k}":${k === field ? value : JSON.stringify(v)}`);
  return `{${parts.join(',')}}`;
}

/** Every row: which field, what is wrong with it, and the POST body (JSON text) that carries it. */
export const INVALID_BOOK_ROWS: readonly { field: 'title' | 'author' | 'year'; name: string; body: string }[] = [
  ...BAD_TEXT.map(([name, value]) => ({ field: 'title' as const, name, body: bodyWith('title', value) })),
  ...BAD_TEXT.map(([name, value]) => ({ field: 'author' as const, name, body: bodyWith('author', value) })),
  ...BAD_YEAR.map(([name, value]) => ({ field: 'year' as const, name, body: bodyWith('year', value) })),
];
