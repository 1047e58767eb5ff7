import { ANSWERS, refusal } from '../http/messages.ts';
import { encodedReply } from '../http/respond.ts';
import { answer, NO_ROUTE, TRANSPORT } from '../http/openapi-operations.ts';
import { defineRoute, type Reply } from '../http/route.ts';
import type { BookStore } from '../store/book-store.ts';

export interface HealthRouteDeps {
  /** True once shutdown has begun. */
  readonly isDraining: () => boolean;
}

const LIVE = encodedReply(ANSWERS.ok, '{"status":"ok"}');

/** Liveness (docs/contract.md, "Operations endpoints"): while draining, 503 tells a load balancer to send new requests elsewhere. */
export const HEALTH_ROUTE = defineRoute({
  method: 'GET',
  pattern: '/healthz',
  pathName: 'health',
  auth: false,
  operation: {
    operationId: 'health',
    summary: 'Liveness: 200 while the process serves (503 while it drains)',
    tags: ['operations'],
    security: [],
    responses: {
      '200': answer(200, [ANSWERS.ok.message], { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }),
      '400': answer(400, [ANSWERS.badRequest.message]),
      ...NO_ROUTE,
      '503': answer(503, [ANSWERS.shuttingDown.message]),
      ...TRANSPORT,
    },
  },
  handler: ({ isDraining }: HealthRouteDeps) =>
    (): Reply => {
      if (isDraining()) throw refusal('shuttingDown');
      return LIVE;
    },
});

export interface ReadinessRouteDeps extends HealthRouteDeps {
  readonly store: Pick<BookStore, 'writable'>;
}

const READY = encodedReply(ANSWERS.ok, '{"status":"ready"}');
const NOT_READY = encodedReply(ANSWERS.notReady, 'null');

/**
 * GET /readyz (docs/contract.md, "Operations endpoints"): 200 only while a write would be
 * accepted, so a load balancer sends traffic elsewhere while the service drains or its store cannot
 * write; /healthz stays the liveness check (restart only when that fails).
 */
export const READINESS_ROUTE = defineRoute({
  method: 'GET',
  pattern: '/readyz',
  pathName: 'readiness',
  auth: false,
  operation: {
    operationId: 'readiness',
    summary: 'Readiness: 200 only while a write would be accepted',
    description: '503 while the service drains, while the store refuses writes until a restart, after a failed write until the store has written durably again by itself, and from the third failed compaction in a row until one succeeds.',
    tags: ['operations'],
    security: [],
    responses: {
      '200': answer(200, [ANSWERS.ok.message], { type: 'object', required: ['status'], properties: { status: { const: 'ready' } } }),
      '400': answer(400, [ANSWERS.badRequest.message]),
      ...NO_ROUTE,
      '503': answer(503, [ANSWERS.notReady.message]),
      ...TRANSPORT,
    },
  },
  handler: ({ isDraining, store }: ReadinessRouteDeps) =>
    (): Reply => (isDraining() || !store.writable ? NOT_READY : READY),
});
