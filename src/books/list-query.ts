import { refusal, type HttpError } from '../http/messages.ts';
import { cursorParam, pageLimit } from '../http/paging.ts';
import { queryOf, singleParam } from '../http/query-params.ts';

/** The opt-in parameters of GET /books (docs/contract.md, "Endpoints"; docs/api.md, "Pages and search"). */
export interface ListQuery {
  /** At most this many books. */
  readonly limit: number;
  /** Only books with a larger id (a keyset cursor); 0 is before every book. */
  readonly after: number;
  /** Case-insensitive substring of the title or the author, when given. */
  readonly q: string | undefined;
}

/** The page size when `after` or `q` is given without `limit`: a query answer is always bounded. */
export const DEFAULT_LIMIT = 100;
/** Longest `q`, in characters (Unicode code points). */
export const MAX_Q = 200;

const invalid = (): HttpError => refusal('invalidQuery');

/**
 * The query of a GET /books request target, decoded as `application/x-www-form-urlencoded`
 * (WHATWG URL: `+` is a space, percent-escapes are UTF-8). undefined when it names none of
 * limit, after and q: the whole list, as without a query. Unknown parameters are ignored.
 */
export function parseListQuery(url: string): ListQuery | undefined {
  if (!url.includes('?')) return undefined;
  const params = queryOf(url);
  const limit = singleParam(params, 'limit');
  const after = singleParam(params, 'after');
  const q = singleParam(params, 'q');
  if (limit === undefined && after === undefined && q === undefined) return undefined;
  return {
    limit: limit === undefined ? DEFAULT_LIMIT : pageLimit(limit),
    after: after === undefined ? 0 : cursorParam(after, 'after'),
    q: q === undefined ? undefined : searchText(q),
  };
}

function searchText(q: string): string {
  // Code points: a character outside the BMP counts once, as a reader would count it.
  if (q.length === 0 || q.length > 2 * MAX_Q || [...q].length > MAX_Q) throw invalid();
  return q;
}
