import { ANSWERS } from '../http/messages.ts';
import { answer, PROTECTED, ref, TRANSPORT, UNAUTHORIZED } from '../http/openapi-operations.ts';
import type { Schema } from '../http/openapi-types.ts';
import { envelopeReply } from '../http/respond.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import { tokenExpiry } from './authorize.ts';
import { issueTicket, type TicketKeys } from './event-ticket.ts';

export interface TicketRouteDeps {
  readonly tickets: TicketKeys;
}

/** The schema POST /events/ticket's answer refers to. */
export const TICKET_SCHEMAS: Readonly<Record<string, Schema>> = {
  EventTicket: {
    type: 'object',
    required: ['ticket', 'exp'],
    properties: {
      ticket: { type: 'string', description: 'Opaque: pass it as GET /events?ticket=…, in that URL only.' },
      exp: { type: 'integer', description: "Unix seconds: the token's exp. The ticket, and every stream opened with it, end then." },
    },
  },
};

/**
 * POST /events/ticket (docs/contract.md, "Event tickets"): a ticket for GET /events' URL, for a
 * browser's EventSource, which cannot send the token. It carries the token's exp, so it never
 * outlives the token; a request made with a ticket cannot get another one.
 */
export const TICKET_ROUTE = defineRoute({
  method: 'POST',
  pattern: '/events/ticket',
  pathName: 'eventTicket',
  auth: true,
  operation: {
    operationId: 'createEventTicket',
    summary: "A ticket that opens GET /events without the Authorization header, until the token's exp (for a browser's EventSource)",
    description:
      'The ticket opens the event stream, and nothing else: GET /events?ticket=… (add `since` to resume). It is valid until the ' +
      "token's exp, as often as needed (an EventSource reconnects to the same URL by itself, also after a restart of the service); " +
      'the stream then ends with `event: expired`: get a new token and ticket, and open it again. Any body is ignored.',
    tags: ['events'],
    security: PROTECTED,
    responses: {
      '200': answer(200, [ANSWERS.ok.message], ref('EventTicket')),
      '401': UNAUTHORIZED,
      ...TRANSPORT,
    },
  },
  handler({ tickets }: TicketRouteDeps) {
    return ({ req }): Reply => {
      const exp = tokenExpiry(req);
      return envelopeReply(ANSWERS.ok, `{"ticket":${JSON.stringify(issueTicket(tickets, exp))},"exp":${exp}}`);
    };
  },
});
