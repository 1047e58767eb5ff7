import type { BookFields } from './book.ts';

/**
 * The rule each field of a book must pass (docs/contract.md, "Books"), field by field. It imports
 * nothing at run time, so the built-in page uses this same module (build/page.ts copies it beside
 * the page's own) to name a wrong field before sending; valid-book.ts applies it to whole books.
 */

/** Limits of the text fields, in Unicode code points. */
export const MAX_TEXT_LENGTH = 1000;
export const MIN_YEAR = -9999;
export const MAX_YEAR = 9999;

/** Each field's rule in words: the page names the field and its rule. */
export const FIELD_RULES: Readonly<Record<keyof BookFields, string>> = {
  title: `not blank, at most ${MAX_TEXT_LENGTH} characters`,
  author: `not blank, at most ${MAX_TEXT_LENGTH} characters`,
  year: `a whole number from ${MIN_YEAR} to ${MAX_YEAR}`,
};

/**
 * Well-formed Unicode (no lone surrogate: RFC 8259 §8.2, text must be valid Unicode to
 * interoperate, and `jq` refuses the escapes) of at most `max` code points, in one pass.
 */
function wellFormedAtMost(text: string, max: number): boolean {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      // A high surrogate followed by a low one is one code point; any other surrogate is alone.
      const next = c <= 0xdbff && i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (next < 0xdc00 || next > 0xdfff) return false;
      i++;
    }
    if (++count > max) return false;
  }
  return true;
}

export function isValidText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '' && wellFormedAtMost(value, MAX_TEXT_LENGTH);
}

/* A JSON number whose value is an integer (2020, 2020.0, 1e3) is an integer (docs/contract.md, "Books"). */
export function isValidYear(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= MIN_YEAR && value <= MAX_YEAR;
}

/** Whether `value` passes the rule of `field`, as POST and PUT check it. */
export function validField(field: keyof BookFields, value: unknown): boolean {
  return field === 'year' ? isValidYear(value) : isValidText(value);
}
