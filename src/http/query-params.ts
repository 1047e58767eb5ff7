import { refusal, type AnswerName } from './messages.ts';

const DIGITS = /^[0-9]+$/;

/** The query parameters of a request target, or none. */
export function queryOf(url: string): URLSearchParams {
  const q = url.indexOf('?');
  return new URLSearchParams(q === -1 ? '' : url.slice(q + 1));
}

/** The parameter's one value; a parameter given twice is refused (which one would count?). */
export function singleParam(params: URLSearchParams, name: string): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw refusal('invalidQuery');
  return values[0];
}

/**
 * Decimal digits only (no sign, no exponent, no spaces) and within [min, max]; else 400 `Invalid
 * query`, or `refused` for a value that does not come from the query (a header).
 */
export function integerParam(text: string, min: number, max: number, refused: AnswerName = 'invalidQuery'): number {
  if (!DIGITS.test(text)) throw refusal(refused);
  const n = Number(text);
  if (n < min || n > max) throw refusal(refused);
  return n;
}
