import { HttpError, MESSAGES } from '../errors.ts';
import type { RouteDefinition } from '../http/router.ts';
import type { Reply, RequestContext, Route } from '../http/route.ts';
import type { ChangeFeed } from './change-log.ts';
import { changeJson } from './change.ts';
import { changesQuery } from './resume-point.ts';

/**
 * GET /changes?since=&limit= (issue 11): the retained changes after `since` (default 0) as one
 * envelope, ascending seq, with `Link: <…>; rel="next"` (RFC 8288) while more follow. A `since`
 * the feed no longer holds, or one past its last change: 410 `Changes no longer available`.
 */
export function changesRoute(feed: ChangeFeed): RouteDefinition<Route> {
  const handle = ({ req }: RequestContext): Reply => {
    const { since, limit } = changesQuery(req.url as string);
    const entries = feed.after(since, limit);
    if (entries === undefined) throw new HttpError(410, MESSAGES.changesUnavailable);
    const last = entries.at(-1)?.seq ?? since;
    const headers = last < feed.seq ? { link: `</changes?since=${last}&limit=${limit}>; rel="next"` } : undefined;
    return { status: 200, message: MESSAGES.changesRetrieved, data: `[${entries.map(changeJson).join(',')}]`, ...(headers && { headers }) };
  };
  return { method: 'GET', pattern: '/changes', handler: { auth: true, handle } };
}
