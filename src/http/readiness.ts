import { MESSAGES } from '../errors.ts';
import { encodedReply } from './respond.ts';
import type { Route } from './route.ts';
import type { RouteDefinition } from './router.ts';

const READY = encodedReply(200, MESSAGES.ok, '{"status":"ready"}');
const NOT_READY = encodedReply(503, MESSAGES.notReady, 'null');

/**
 * GET /readyz (docs/contract.md, "Capabilities being added"): 200 only while a write would be
 * accepted, so a load balancer sends traffic elsewhere while the service drains or its store cannot
 * write; /healthz stays the liveness check (restart only when that fails).
 */
export function readinessRoute(isDraining: () => boolean, store: { readonly writable: boolean }): RouteDefinition<Route> {
  return {
    method: 'GET',
    pattern: '/readyz',
    handler: { auth: false, handle: () => (isDraining() || !store.writable ? NOT_READY : READY) },
  };
}
