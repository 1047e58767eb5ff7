import { HttpError, MESSAGES } from '../errors.ts';
import type { BookFields, BookPatch } from './model.ts';

/** docs/contract.md, "Books": limits of the text fields, in Unicode code points. */
export const MAX_TEXT_LENGTH = 1000;
export const MIN_YEAR = -9999;
export const MAX_YEAR = 9999;

function invalid(): HttpError {
  return new HttpError(400, MESSAGES.invalidInput);
}

function codePointLengthAtMost(text: string, max: number): boolean {
  if (text.length <= max) return true;
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    if (++count > max) return false;
  }
  return true;
}

function checkText(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '' || !codePointLengthAtMost(value, MAX_TEXT_LENGTH)) throw invalid();
  return value;
}

/* A JSON number whose value is an integer (2020, 2020.0, 1e3) is an integer (docs/contract.md, "Books"). */
function checkYear(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < MIN_YEAR || value > MAX_YEAR) throw invalid();
  return value;
}

/** POST /book: all three fields, each valid; `id` and unknown keys are ignored. */
export function parseBookFields(body: Record<string, unknown>): BookFields {
  return { title: checkText(body.title), author: checkText(body.author), year: checkYear(body.year) };
}

/** PUT /book/{id}: each field present must be valid; absent fields keep their value. */
export function parseBookPatch(body: Record<string, unknown>): BookPatch {
  const patch: { title?: string; author?: string; year?: number } = {};
  if (Object.hasOwn(body, 'title')) patch.title = checkText(body.title);
  if (Object.hasOwn(body, 'author')) patch.author = checkText(body.author);
  if (Object.hasOwn(body, 'year')) patch.year = checkYear(body.year);
  return patch;
}

/** docs/contract.md, "Paths and ids": decimal digits naming a safe integer; `007` is 7. */
export function parseBookId(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) throw new HttpError(400, MESSAGES.invalidBookId);
  }
  const id = Number(text);
  if (text.length === 0 || !Number.isSafeInteger(id)) throw new HttpError(400, MESSAGES.invalidBookId);
  return id;
}
