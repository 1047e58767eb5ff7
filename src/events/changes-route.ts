import { ANSWERS, refusal } from '../http/messages.ts';
import { answer, NULL, PROTECTED, ref, TRANSPORT, UNAUTHORIZED } from '../http/openapi.ts';
import type { Parameter, Schema } from '../http/openapi-types.ts';
import { envelopeReply } from '../http/respond.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import type { BookStore } from '../store/book-store.ts';
import { changeJson } from '../store/change.ts';
import { changesQuery } from './resume-point.ts';

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

export const SINCE: Parameter = {
  name: 'since',
  in: 'query',
  required: false,
  description: 'A change seq: answer the changes after it (default 0). Decimal digits, else 400 `Invalid query`.',
  schema: { type: 'string', pattern: '^[0-9]+$' },
};

/**
 * GET /changes?since=&limit= (issue 11): the retained changes after `since` (default 0) as one
 * envelope, ascending seq, with `Link: <…>; rel="next"` (RFC 8288) while more follow. A `since`
 * the feed no longer holds, or one past its last change: 410 `Changes no longer available`.
 */
export const CHANGES_ROUTE = defineRoute({
  method: 'GET',
  pattern: '/changes',
  pathName: 'changes',
  auth: true,
  operation: {
    operationId: 'listChanges',
    summary: 'The durable changes after `since`, ascending seq (a change feed for clients that poll)',
    tags: ['events'],
    security: PROTECTED,
    parameters: [
      SINCE,
      { name: 'limit', in: 'query', required: false, description: '1 to 1000, default 1000.', schema: { type: 'string', pattern: '^[0-9]+$' } },
    ],
    responses: {
      '200': answer(200, [ANSWERS.changesRetrieved.message], { type: 'array', items: ref('Change') }, {
        Link: { description: '`</changes?since=N&limit=L>; rel="next"` while more changes follow (RFC 8288), the path prefixed with the mount path when the catalogue is mounted.', schema: { type: 'string' } },
      }),
      '400': answer(400, [ANSWERS.invalidQuery.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      '410': answer(410, [ANSWERS.changesUnavailable.message]),
      ...TRANSPORT,
    },
  },
  handler({ store, linkBase }: { readonly store: BookStore; readonly linkBase: string }) {
    const { feed } = store;
    return ({ req }): Reply => {
      const { since, limit } = changesQuery(req.url as string);
      const entries = feed.after(since, limit);
      if (entries === undefined) throw refusal('changesUnavailable');
      const last = entries.at(-1)?.seq ?? since;
      const headers = last < feed.seq ? { link: `<${linkBase}/changes?since=${last}&limit=${limit}>; rel="next"` } : undefined;
      return envelopeReply(ANSWERS.changesRetrieved, `[${entries.map(changeJson).join(',')}]`, headers);
    };
  },
});
