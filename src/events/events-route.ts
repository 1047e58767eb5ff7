import type { IncomingMessage } from 'node:http';
import { ANSWERS, refusal } from '../http/messages.ts';
import { answer, NULL, PROTECTED, REQUEST_ID, TRANSPORT, UNAUTHORIZED } from '../http/openapi-operations.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import { whenCaughtUp, type BookStore } from '../store/book-store.ts';
import { sinceParameter } from './changes-route.ts';
import { resumePoint } from './resume-point.ts';
import { EVENT_STREAM_DEFAULTS, type StreamRegistry } from './stream-registry.ts';

/** Seconds a client refused for the stream limit waits before trying again. */
const RETRY_AFTER_SECONDS = '5';

export interface EventsRouteDeps {
  readonly eventStreams: StreamRegistry;
  readonly isDraining: () => boolean;
  /** The `exp` (seconds) of the request's token, which the authorizer has verified before the handler runs. */
  readonly tokenExpiry: (req: IncomingMessage) => number;
  readonly store: BookStore;
}

/**
 * GET /events (docs/contract.md, "Change feed"): the change feed as Server-Sent Events. Everything that can refuse it
 * (401, 400 for a bad resume point, 503) is decided before the head is written, so those are
 * envelopes; then the registry owns the response.
 */
export const EVENTS_ROUTE = defineRoute({
  method: 'GET',
  pattern: '/events',
  pathName: 'events',
  auth: true,
  stream: true,
  ticket: true,
  operation: {
    operationId: 'streamEvents',
    summary: 'The change feed as Server-Sent Events, not an envelope',
    description:
      'Each durable change is one frame: `id: <seq>`, `event: created|updated|deleted`, `data: <Change JSON>`. ' +
      'Resume with the Last-Event-ID header (wins) or `?since=`: every retained change after it, then live ones, ' +
      'no gap, no duplicate. Neither: live changes only. A seq no longer retained (or past the last change): one ' +
      '`event: reset` frame (`id` and `data`: the current seq), then live changes: reload the books. `: heartbeat` ' +
      `comments every ${EVENT_STREAM_DEFAULTS.heartbeatMs / 1000} s. At the token's exp: \`event: expired\` (data: the last seq sent), then the stream ends: ` +
      'sign in again and resume. Streams end when the service drains; a client that does not read is cut off. ' +
      `Each stream starts with \`retry: ${EVENT_STREAM_DEFAULTS.retryMs}\` (ms; an embedder may set another), the time a browser waits before it reconnects. Errors before the stream ` +
      'starts are envelopes. A browser\'s EventSource, which cannot send Authorization, passes `?ticket=` from ' +
      'POST /events/ticket instead.',
    tags: ['events'],
    security: [...PROTECTED, { eventTicket: [] }],
    parameters: [
      sinceParameter('every retained change after it first, then live ones (without it or Last-Event-ID: live changes only)'),
      {
        name: 'Last-Event-ID',
        in: 'header',
        required: false,
        description: 'The id of the last frame received; wins over `since`. Not decimal digits naming a safe integer: 400 `Bad request`.',
        schema: { type: 'string', pattern: '^[0-9]+$' },
      },
    ],
    responses: {
      '200': {
        description: 'A text/event-stream of change frames (see the operation description); not an envelope.',
        headers: { 'X-Request-Id': REQUEST_ID },
        content: { 'text/event-stream': { schema: { type: 'string' } } },
      },
      '400': answer(400, [ANSWERS.invalidQuery.message, ANSWERS.badRequest.message]),
      '401': UNAUTHORIZED,
      '503': answer(503, [ANSWERS.tooManyEventStreams.message, ANSWERS.shuttingDown.message], NULL, {
        'Retry-After': { description: 'Seconds to wait before opening a stream again (the stream limit).', schema: { type: 'integer', minimum: 1 } },
      }),
      ...TRANSPORT,
    },
  },
  handler({ eventStreams, isDraining, tokenExpiry, store }: EventsRouteDeps) {
    return ({ req, res, reqId }): Reply | Promise<Reply> => {
      // Said now, before the store may have to catch up: a stream never ends, so no request
      // pipelined behind this one can be answered, and the guard runs none (docs/contract.md, "Transport").
      res.shouldKeepAlive = false;
      if (isDraining()) throw refusal('shuttingDown');
      const since = resumePoint(req);
      const exp = tokenExpiry(req);
      // A client that moved to this process resumes from a seq another one sent it: caught up, that seq is no reset.
      return whenCaughtUp(store, (): Reply => {
        if (isDraining()) throw refusal('shuttingDown');
        if (eventStreams.refuses(req)) throw refusal('tooManyEventStreams', { 'retry-after': RETRY_AFTER_SECONDS });
        return { status: 200, stream: (headers) => eventStreams.open(req, res, reqId, headers, since, exp) };
      });
    };
  },
});
