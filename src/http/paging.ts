import type { AnswerName } from './messages.ts';
import { integerParam } from './query-params.ts';

/** The most items one page holds: the largest `limit` of GET /books and of GET /changes (docs/contract.md). */
export const MAX_PAGE_LIMIT = 1000;

/** A page's `limit` as sent: decimal digits, 1 to MAX_PAGE_LIMIT, else 400 `Invalid query`. */
export function pageLimit(text: string): number {
  return integerParam(text, 1, MAX_PAGE_LIMIT);
}

/**
 * The largest value of each keyset cursor. GET /books' `after` only says where the ids start, and
 * every id is a safe integer (docs/contract.md, "Books"), so an `after` of any size is taken: past
 * 2^53 − 1 it is past every book, however it rounds. A change seq (`since`, `Last-Event-ID`) names
 * one change, a safe integer as every seq is; a larger one names none and is refused rather than
 * rounded to another.
 */
export const CURSOR_MAX = { after: Number.POSITIVE_INFINITY, seq: Number.MAX_SAFE_INTEGER } as const;

/** A cursor as sent: decimal digits from 0 (before the first) to its CURSOR_MAX, else 400 `refused`. */
export function cursorParam(text: string, cursor: keyof typeof CURSOR_MAX, refused: AnswerName = 'invalidQuery'): number {
  return integerParam(text, 0, CURSOR_MAX[cursor], refused);
}

/** The RFC 8288 `Link` header value to the next page: `base` (the mount path, or '') + `path`, and its query. */
export function nextPageLink(base: string, path: string, query: string): string {
  return `<${base}${path}?${query}>; rel="next"`;
}
