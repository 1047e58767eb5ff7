import { hash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ClientAbortedError } from '../http/body.ts';
import { ANSWERS } from '../http/messages.ts';
import { answer, NO_ROUTE, PROTECTED, ref, TRANSPORT, UNAUTHORIZED } from '../http/openapi-operations.ts';
import type { Parameter } from '../http/openapi-types.ts';
import { MAX_PAGE_LIMIT, nextPageLink } from '../http/paging.ts';
import { encodedReply, envelopeReply } from '../http/respond.ts';
import { defineRoute, type EnvelopeReply, type Reply, type PiecewiseBody } from '../http/route.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import { BOOK_KEYS } from '../model/book.ts';
import { idAt, type ListSnapshot } from '../store/book-index.ts';
import { whenCaughtUp, type BookStore } from '../store/book-store.ts';
import { compressedListBody } from './compressed-list-body.ts';
import { listBody } from './list-body.ts';
import { DEFAULT_LIMIT, MAX_Q, parseListQuery, type ListQuery } from './list-query.ts';
import { search } from './search.ts';

/**
 * A list up to this size is encoded once per committed state and sent as one buffer, as every
 * other cached answer is; a larger one is streamed from the page texts (list-body.ts), never held
 * whole. 64 KiB is one streamed piece: below it, streaming buys nothing and costs per answer.
 */
const ENCODED_LIST_BYTES = 1 << 16;

/** What GET /books needs (part of ServiceDeps). */
export interface ListRouteDeps {
  readonly store: BookStore;
  /** What `Link` targets start with (BookRouteDeps). */
  readonly linkBase: string;
  /** What a full list being sent, or a search, is charged to for the superseded pages it holds. */
  readonly memoryBudget: MemoryBudget;
}

const QUERY_RULE = 'A parameter given twice, or a value outside its rule, is 400 `Invalid query`.';
const LIST_QUERY: readonly Parameter[] = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `At most this many books (${DEFAULT_LIMIT} when after or q is given without it). ${QUERY_RULE}`,
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT, description: `Sent as decimal digits (\`007\` is 7), 1 to ${MAX_PAGE_LIMIT}.` },
  },
  {
    name: 'after',
    in: 'query',
    required: false,
    description: `Only books with a larger id: a keyset cursor (0: from the first book). ${QUERY_RULE}`,
    schema: { type: 'integer', minimum: 0, description: 'Sent as decimal digits (no sign, no exponent); any size is accepted.' },
  },
  {
    name: 'q',
    in: 'query',
    required: false,
    description: `Books whose title or author contains this text under Unicode simple case folding, no normalization. ${QUERY_RULE}`,
    schema: { type: 'string', minLength: 1, maxLength: MAX_Q, description: `1 to ${MAX_Q} Unicode code points.` },
  },
];

/**
 * GET /books. Without limit, after or q: every book, streamed from the pages of the state
 * committed when the request was handled. With them: one page of books (or of matches), the
 * number that match in `X-Total-Count`, and a `Link` to the next page when more follow.
 */
export const LIST_BOOKS = defineRoute({
  method: 'GET',
  pattern: '/books',
  pathName: 'books',
  auth: true,
  operation: {
    operationId: 'listBooks',
    summary: 'Every book, ascending id; with limit, after or q, one page of them',
    tags: ['books'],
    security: PROTECTED,
    parameters: LIST_QUERY,
    responses: {
      '200': answer(200, [ANSWERS.booksRetrieved.message], { type: 'array', items: ref('Book') }, {
        ETag: {
          description: 'Strong entity tag of the committed state this answer shows (and of a page\'s query): send it back in If-None-Match to get 304 while nothing has changed.',
          required: true,
          schema: { type: 'string' },
        },
        Link: { description: 'With limit, after or q, when more books follow: `</books?limit=…&after=…[&q=…]>; rel="next"` (RFC 8288), the path prefixed with the mount path when the catalogue is mounted.', schema: { type: 'string' } },
        'X-Total-Count': { description: 'With limit, after or q: how many books match (without q, the catalogue size).', schema: { type: 'integer', minimum: 0 } },
      }),
      '400': answer(400, [ANSWERS.invalidQuery.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      ...NO_ROUTE,
      ...TRANSPORT,
    },
  },
  handler({ store, linkBase, memoryBudget }: ListRouteDeps) {
    // Names this app's view of the store: a restored or other data directory starts its seqs again.
    const epoch = randomBytes(9).toString('base64url');
    // One reply per committed state, for as long as something holds that state (the store until the
    // next write, the answers sending it): a cache of its own would keep a superseded state whole.
    const listed = new WeakMap<ListSnapshot, Reply>();
    // The last encoded reply and the seq that names its state (its ETag's): while no write has
    // advanced the feed, the state is the same and so is the answer, sent without waiting for a
    // snapshot (docs/performance.md, "Where the microseconds go"). An encoded reply holds at most
    // ENCODED_LIST_BYTES of its own (and its gzip form, once asked for, smaller) and no page: a write
    // leaves that much behind until the next list.
    let latest: { readonly seq: number; readonly reply: Reply } | undefined;
    const everyBook = (snapshot: ListSnapshot): Reply => {
      let reply = listed.get(snapshot);
      if (reply === undefined) {
        const { status, message } = ANSWERS.booksRetrieved;
        const seq = store.feed.seq;
        const headers = { etag: listTag(epoch, seq, undefined) };
        if (snapshot.bytes <= ENCODED_LIST_BYTES) {
          reply = encodedReply(ANSWERS.booksRetrieved, `[${snapshot.pages.map((page) => page.text).join(',')}]`, headers);
          latest = { seq, reply };
        } else {
          reply = { status, message, data: '', body: streamedList(snapshot, memoryBudget), headers };
          latest = undefined;
        }
        listed.set(snapshot, reply);
      }
      return reply;
    };
    const answer = (req: IncomingMessage, query: ListQuery | undefined): Reply | Promise<Reply> => {
      if (query === undefined) return latest !== undefined && latest.seq === store.feed.seq ? latest.reply : store.listSnapshot().then(everyBook);
      const { q, after, limit } = query;
      if (q === undefined) {
        const { books, more } = store.booksAfter(after, limit);
        return pageReply(linkBase, query, books, more, store.size, listTag(epoch, store.feed.seq, query));
      }
      const abandoned = (): boolean => req.socket.destroyed;
      return store.listSnapshot().then((snapshot) => {
        const etag = listTag(epoch, store.feed.seq, query);
        return search(snapshot, { q, after, limit, abandoned, budget: memoryBudget }).then((found) => {
          if (found === undefined) throw new ClientAbortedError();
          return pageReply(linkBase, query, found.books, found.more, found.total, etag);
        });
      });
    };
    return ({ req }): Reply | Promise<Reply> => {
      const query = parseListQuery(req.url as string);
      return whenCaughtUp(store, () => answer(req, query));
    };
  },
});

/** The full list streamed as it is, or gzip-encoded for a request that takes it (http/content-coding.ts). */
function streamedList(snapshot: ListSnapshot, budget: MemoryBudget): PiecewiseBody {
  const answer = ANSWERS.booksRetrieved;
  return Object.assign(listBody(answer, snapshot, budget), { gzip: () => compressedListBody(answer, snapshot, budget) });
}

/**
 * The ETag of a GET /books answer (docs/contract.md, "Conditional requests"): the committed state
 * it shows, named by the feed's seq, which every durable change advances, plus a page's query; no
 * body is hashed. The seq is read in the same turn as the state (a snapshot resolves in the turn
 * it is taken; a commit is applied in a turn of its own), so the two always agree. `epoch` is
 * random per app: a catalogue restored from an export starts at seq 0 again, and its seq 5 is not
 * the old one's. Strong: one state and one query give the same bytes.
 */
function listTag(epoch: string, seq: number, query: ListQuery | undefined): string {
  if (query === undefined) return `"books-${epoch}-${seq}"`;
  const q = query.q === undefined ? '' : `-${hash('sha256', query.q, 'base64url').slice(0, 22)}`;
  return `"books-${epoch}-${seq}-${query.limit}-${query.after}${q}"`;
}

/** One page as the usual envelope, with RFC 8288 `Link: <…>; rel="next"` when more follow. */
function pageReply(linkBase: string, query: ListQuery, books: readonly string[], more: boolean, total: number, etag: string): EnvelopeReply {
  const headers: Record<string, string> = { 'x-total-count': String(total), etag };
  const last = books.at(-1);
  if (more && last !== undefined) {
    const q = query.q === undefined ? '' : `&q=${encodeURIComponent(query.q)}`;
    headers.link = nextPageLink(linkBase, '/books', `limit=${query.limit}&after=${idAt(last, BOOK_KEYS.id.length)}${q}`);
  }
  return envelopeReply(ANSWERS.booksRetrieved, `[${books.join(',')}]`, headers);
}
