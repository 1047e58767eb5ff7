import { BOOK_KEYS } from '../model/book.ts';
import { MAX_BOOK_ID } from '../model/valid-book.ts';

/**
 * The decimal number in buf[from, to): 1-16 ASCII digits and a safe integer, else undefined.
 * Stricter than Number(), which also takes signs, spaces, exponents and hex: journal and snapshot
 * numbers are only ever written as plain digits, so anything else is damage.
 */
export function decimalAt(buf: Buffer, from: number, to: number): number | undefined {
  if (to <= from || to - from > 16) return undefined;
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = buf[i] as number;
    if (c < 48 || c > 57) return undefined;
    n = n * 10 + (c - 48);
  }
  return Number.isSafeInteger(n) ? n : undefined;
}

const BOOK_ID_PREFIX = Buffer.from(BOOK_KEYS.id, 'latin1');

/**
 * The book id in buf[from, to): a decimal from 1 to MAX_BOOK_ID, the bound the store gives ids
 * within, so what the writer cannot write the reader takes as damage.
 */
export function bookIdIn(buf: Buffer, from: number, to: number): number | undefined {
  const id = decimalAt(buf, from, to);
  return id !== undefined && id >= 1 && id <= MAX_BOOK_ID ? id : undefined;
}

/** The id of the book JSON starting at buf[start]: `{"id":`, then a book id up to the next comma. */
export function bookIdAt(buf: Buffer, start: number): number | undefined {
  const from = start + BOOK_ID_PREFIX.length;
  if (buf.compare(BOOK_ID_PREFIX, 0, BOOK_ID_PREFIX.length, start, from) !== 0) return undefined;
  return bookIdIn(buf, from, buf.indexOf(44, from));
}
