import { MESSAGES } from '../errors.ts';
import { ClientAbortedError } from '../http/body.ts';
import type { RouteDefinition } from '../http/router.ts';
import type { Reply, RequestContext, Route } from '../http/route.ts';
import { idAt, type ListSnapshot } from '../store/book-index.ts';
import type { BookStore } from '../store/store.ts';
import { listBody } from './list-body.ts';
import { parseListQuery, type ListQuery } from './list-query.ts';
import { BOOK_START, search } from './search.ts';

/**
 * GET /books. Without limit, after or q: every book, streamed from the pages of the state
 * committed when the request was handled. With them: one page of books (or of matches), the
 * number that match in `X-Total-Count`, and a `Link` to the next page when more follow.
 */
export function listRoute(store: BookStore): RouteDefinition<Route> {
  let listed: { snapshot: ListSnapshot; reply: Reply } | undefined;
  const handle = ({ req }: RequestContext): Reply | Promise<Reply> => {
    const query = parseListQuery(req.url as string);
    if (query === undefined) {
      const snapshot = store.listSnapshot();
      if (listed?.snapshot !== snapshot) {
        listed = { snapshot, reply: { status: 200, message: MESSAGES.booksRetrieved, data: '', body: listBody(200, MESSAGES.booksRetrieved, snapshot) } };
      }
      return listed.reply;
    }
    if (query.q === undefined) {
      const { books, more } = store.booksAfter(query.after, query.limit);
      return pageReply(query, books, more, store.size);
    }
    return search(store.listSnapshot(), { q: query.q, after: query.after, limit: query.limit, abandoned: () => req.socket.destroyed }).then((found) => {
      if (found === undefined) throw new ClientAbortedError();
      return pageReply(query, found.books, found.more, found.total);
    });
  };
  return { method: 'GET', pattern: '/books', handler: { auth: true, handle } };
}

/** One page as the usual envelope, with RFC 8288 `Link: <…>; rel="next"` when more follow. */
function pageReply(query: ListQuery, books: readonly string[], more: boolean, total: number): Reply {
  const headers: Record<string, string> = { 'x-total-count': String(total) };
  const last = books.at(-1);
  if (more && last !== undefined) {
    const q = query.q === undefined ? '' : `&q=${encodeURIComponent(query.q)}`;
    headers.link = `</books?limit=${query.limit}&after=${idAt(last, BOOK_START.length)}${q}>; rel="next"`;
  }
  return { status: 200, message: MESSAGES.booksRetrieved, data: `[${books.join(',')}]`, headers };
}
