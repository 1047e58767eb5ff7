import { ERROR_CODES } from '../faults.ts';
import type { Book, BookFields, BookPatch } from './book.ts';
import { FIELD_RULES, isValidText, isValidYear, MAX_YEAR, MIN_YEAR } from './book-rule.ts';

export { MAX_TEXT_LENGTH, MAX_YEAR, MIN_YEAR } from './book-rule.ts';

/**
 * Book ids are safe integers (docs/contract.md, "Books"): past 2^53 − 1 a JavaScript number (and
 * most JSON readers) no longer tells n from n + 1, so two books would share an id. The store gives
 * no id above this one, and the journal's reader takes a record naming one as damage.
 */
export const MAX_BOOK_ID = Number.MAX_SAFE_INTEGER;
/** The largest id a catalogue may be restored with (writeCatalogue, import): the next create still gets MAX_BOOK_ID. */
export const MAX_RESTORED_ID = MAX_BOOK_ID - 1;

/** The rule every accepting path states when it refuses a book. */
export const VALID_BOOK_RULE = `a positive integer id, title and author (${FIELD_RULES.title}) and an integer year from ${MIN_YEAR} to ${MAX_YEAR}`;

/**
 * A book that breaks the rule of docs/contract.md, "Books". The API answers it with 400 `Invalid
 * input` (service/app.ts); `import` and `writeCatalogue` refuse the whole catalogue with it. A
 * TypeError: the value is not of the type the caller promised.
 */
export class InvalidBookError extends TypeError {
  readonly code = ERROR_CODES.invalidBook;
  constructor(message = `not a valid book: expected ${VALID_BOOK_RULE}`) {
    super(message);
    this.name = 'InvalidBookError';
  }
}

function checkText(value: unknown): string {
  if (!isValidText(value)) throw new InvalidBookError();
  return value;
}

function checkYear(value: unknown): number {
  if (!isValidYear(value)) throw new InvalidBookError();
  return value;
}

/** A new book: all three fields, each valid; `id` and unknown keys are ignored. */
export function validFields(value: Readonly<Record<string, unknown>>): BookFields {
  return { title: checkText(value.title), author: checkText(value.author), year: checkYear(value.year) };
}

/** A change to a book: each field present must be valid; absent fields keep their value. */
export function validPatch(value: Readonly<Record<string, unknown>>): BookPatch {
  const patch: { title?: string; author?: string; year?: number } = {};
  if (Object.hasOwn(value, 'title')) patch.title = checkText(value.title);
  if (Object.hasOwn(value, 'author')) patch.author = checkText(value.author);
  if (Object.hasOwn(value, 'year')) patch.year = checkYear(value.year);
  return patch;
}

/** An id that would leave the next create without one (docs/contract.md, "Durability"). */
class IdLeavesNoneError extends InvalidBookError {}

/** An integer id above MAX_RESTORED_ID, however it is written: said apart from the other faults of a book. */
function idLeavesNone(id: number): IdLeavesNoneError {
  return new IdLeavesNoneError(`id ${id} leaves no id for the next create: the largest id a catalogue may hold is ${MAX_RESTORED_ID} (2^53 − 2)`);
}

/**
 * A whole book as a backup holds it: a positive integer id up to MAX_RESTORED_ID and valid
 * fields; unknown keys are ignored.
 */
export function validBook(value: unknown): Book {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new InvalidBookError();
  const b = value as Record<string, unknown>;
  if (!Number.isInteger(b.id) || (b.id as number) < 1) throw new InvalidBookError();
  if ((b.id as number) > MAX_RESTORED_ID) throw idLeavesNone(b.id as number);
  return { id: b.id as number, ...validFields(b) };
}

/** validBook for the book at `index` of a catalogue: the error names it. */
export function validBookAt(value: unknown, index: number): Book {
  try {
    return validBook(value);
  } catch (err) {
    if (err instanceof IdLeavesNoneError) throw new InvalidBookError(`book at index ${index}: ${err.message}`);
    throw new InvalidBookError(`book at index ${index} is not valid: expected ${VALID_BOOK_RULE}`);
  }
}

/**
 * A whole catalogue (import, writeCatalogue): every book valid, ids unique; ascending id order.
 * The error names the first book that fails.
 */
export function validCatalogue(values: readonly unknown[]): Book[] {
  const books = values.map(validBookAt);
  books.sort((a, b) => a.id - b.id);
  for (let i = 1; i < books.length; i++) {
    if (books[i]?.id === books[i - 1]?.id) throw new InvalidBookError(`id ${books[i]?.id} appears twice`);
  }
  return books;
}
