import { ANSWERS, refusal } from '../http/messages.ts';
import { CURSOR_MAX, MAX_PAGE_LIMIT, nextPageLink } from '../http/paging.ts';
import { answer, NULL, PROTECTED, ref, TRANSPORT, UNAUTHORIZED } from '../http/openapi-operations.ts';
import type { Header, Parameter, Schema } from '../http/openapi-types.ts';
import { envelopeReply } from '../http/respond.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import { whenCaughtUp, type BookStore } from '../store/book-store.ts';
import { changeJson } from '../store/change.ts';
import { RETAINED_CHANGES } from '../store/change-log.ts';
import { changesQuery } from './resume-point.ts';

/**
 * The bytes of changes past which GET /changes adds no more to a page (docs/contract.md,
 * "Change feed"): 1000 changes of the largest books (a title and an author of 1000 control
 * characters, each escaped to six) are about 12 MB of JSON text, built as one string. 256 KiB holds
 * 1000 changes of typical books (about 150 bytes each) and keeps what one address's answers in
 * flight can hold, 256 of them, at 64 MiB (SECURITY.md, "Limits").
 */
export const MAX_CHANGES_PAGE_BYTES = 256 * 1024;

/** The schema GET /changes' operation refers to. */
export const CHANGE_SCHEMAS: Readonly<Record<string, Schema>> = {
  Change: {
    type: 'object',
    required: ['seq', 'type', 'id', 'book'],
    description: 'One durable change; `seq` is the journal sequence number, growing across restarts and compactions.',
    properties: {
      seq: { type: 'integer', minimum: 1 },
      type: { enum: ['created', 'updated', 'deleted'] },
      id: { type: 'integer', minimum: 1 },
      book: { description: 'The book after the change; null when deleted.', oneOf: [ref('Book'), NULL] },
    },
  },
};

/** `since` as both routes take it; `meaning` says what it does there and what its absence means. */
export function sinceParameter(meaning: string): Parameter {
  return { name: 'since', in: 'query', required: false, description: `A change seq: ${meaning}. Decimal digits, else 400 \`Invalid query\`.`, schema: { type: 'integer', minimum: 0, maximum: CURSOR_MAX.seq, description: 'Sent as decimal digits (no sign, no exponent).' } };
}

const LAST_SEQ: Header = {
  description:
    'The seq of the last durable change when the answer was made. After a 410, reload the books (GET /books), then follow from this seq: ' +
    'changes made meanwhile come again, and applying them again is harmless, since each carries the book after it.',
  schema: { type: 'integer', minimum: 0 },
};

/**
 * GET /changes?since=&limit= (docs/contract.md, "Change feed"): the retained changes after `since` (default 0) as one
 * envelope, ascending seq, up to `limit` and MAX_CHANGES_PAGE_BYTES, with `Link: <…>; rel="next"` (RFC 8288) while more follow. A `since`
 * the feed no longer holds, or one past its last change: 410 `Changes no longer available`. Both
 * carry `X-Last-Seq`, the feed's seq, so a client that only polls learns where to follow from
 * after reloading (the /events stream says it in its `reset` frame).
 */
export const CHANGES_ROUTE = defineRoute({
  method: 'GET',
  pattern: '/changes',
  pathName: 'changes',
  auth: true,
  operation: {
    operationId: 'listChanges',
    summary: 'The durable changes after `since`, ascending seq (a change feed for clients that poll)',
    description:
      `The last ${RETAINED_CHANGES.toLocaleString('en')} changes are retained, and every change since the last snapshot (fewer when they would spend the memory budget). A \`since\` older than that, ` +
      'or past the last change (another history, e.g. a restored backup): 410 `Changes no longer available`.',
    tags: ['events'],
    security: PROTECTED,
    parameters: [
      sinceParameter('answer the changes after it (default 0)'),
      {
        name: 'limit',
        in: 'query',
        required: false,
        description:
          `At most this many changes: 1 to ${MAX_PAGE_LIMIT}, default ${MAX_PAGE_LIMIT}. Decimal digits, else 400 \`Invalid query\`. ` +
          `A page also stops before its changes pass ${MAX_CHANGES_PAGE_BYTES} bytes of JSON (always at least one change): continue from its \`Link\`.`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_LIMIT },
      },
    ],
    responses: {
      '200': answer(200, [ANSWERS.changesRetrieved.message], { type: 'array', items: ref('Change') }, {
        Link: { description: '`</changes?since=N&limit=L>; rel="next"` while more changes follow (RFC 8288), the path prefixed with the mount path when the catalogue is mounted.', schema: { type: 'string' } },
        'X-Last-Seq': LAST_SEQ,
      }),
      '400': answer(400, [ANSWERS.invalidQuery.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      '410': answer(410, [ANSWERS.changesUnavailable.message], NULL, { 'X-Last-Seq': LAST_SEQ }),
      ...TRANSPORT,
    },
  },
  handler({ store, linkBase }: { readonly store: BookStore; readonly linkBase: string }) {
    const { feed } = store;
    return ({ req }): Reply | Promise<Reply> => {
      const { since, limit } = changesQuery(req.url as string);
      return whenCaughtUp(store, () => changesReply(since, limit));
    };
    function changesReply(since: number, limit: number): Reply {
      const entries = feed.after(since, limit);
      const lastSeq = String(feed.seq);
      if (entries === undefined) throw refusal('changesUnavailable', { 'x-last-seq': lastSeq });
      const parts: string[] = [];
      let bytes = 0;
      let last = since;
      for (const entry of entries) {
        const json = changeJson(entry);
        bytes += Buffer.byteLength(json) + 1;
        if (bytes > MAX_CHANGES_PAGE_BYTES && parts.length > 0) break;
        parts.push(json);
        last = entry.seq;
      }
      const headers: Record<string, string> = { 'x-last-seq': lastSeq };
      if (last < feed.seq) headers.link = nextPageLink(linkBase, '/changes', `since=${last}&limit=${limit}`);
      return envelopeReply(ANSWERS.changesRetrieved, `[${parts.join(',')}]`, headers);
    }
  },
});
