import type { IncomingMessage } from 'node:http';
import { trimOws } from '../http/header-value.ts';
import { cursorParam, MAX_PAGE_LIMIT, pageLimit } from '../http/paging.ts';
import { queryOf, singleParam } from '../http/query-params.ts';

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
