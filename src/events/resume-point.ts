import type { IncomingMessage } from 'node:http';
import { trimOws } from '../http/header-value.ts';
import { cursorParam, MAX_PAGE_LIMIT, pageLimit } from '../http/paging.ts';
import { queryOf, singleParam } from '../http/query-params.ts';

/**
 * The bytes of changes past which GET /changes adds no more to a page (docs/contract.md,
 * "Change feed"): 1000 changes of the largest books (a title and an author of 1000 control
 * characters, each escaped to six) are about 12 MB of JSON text, built as one string. 256 KiB holds
 * 1000 changes of typical books (about 150 bytes each) and keeps what one address's answers in
 * flight can hold, 256 of them, at 64 MiB (SECURITY.md, "Limits").
 */
export const MAX_CHANGES_PAGE_BYTES = 256 * 1024;

/** GET /changes' `since` (default 0) and `limit` (default the largest, MAX_PAGE_LIMIT). */
export function changesQuery(url: string): { since: number; limit: number } {
  const query = queryOf(url);
  const since = singleParam(query, 'since');
  const limit = singleParam(query, 'limit');
  return { since: since === undefined ? 0 : cursorParam(since, 'seq'), limit: limit === undefined ? MAX_PAGE_LIMIT : pageLimit(limit) };
}

/**
 * Where a stream resumes: `Last-Event-ID` wins over `?since=`, because a browser's EventSource
 * reconnects to the same URL (its original `since`) with the id of the last frame it got. Neither:
 * undefined (live changes only). An empty Last-Event-ID is what EventSource sends before any id.
 * A Last-Event-ID that is not a seq is a malformed header, not a bad query: 400 `Bad request`
 * (docs/contract.md, "Change feed").
 */
export function resumePoint(req: IncomingMessage): number | undefined {
  const lastEventId = req.headers['last-event-id'];
  if (typeof lastEventId === 'string' && lastEventId !== '') return cursorParam(trimOws(lastEventId), 'seq', 'badRequest');
  const since = singleParam(queryOf(req.url as string), 'since');
  return since === undefined ? undefined : cursorParam(since, 'seq');
}
