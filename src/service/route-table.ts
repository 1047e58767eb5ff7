import { TICKET_ROUTE, type TicketRouteDeps } from '../auth/ticket-route.ts';
import { TOKEN_ROUTE, type TokenRouteDeps } from '../auth/token-route.ts';
import { BOOK_ROUTES, type BookRouteDeps } from '../books/book-routes.ts';
import type { ListRouteDeps } from '../books/list-route.ts';
import { CHANGES_ROUTE } from '../events/changes-route.ts';
import { EVENTS_ROUTE, type EventsRouteDeps } from '../events/events-route.ts';
import type { Route } from '../http/route.ts';
import { HEALTH_ROUTE, READINESS_ROUTE, type HealthRouteDeps } from '../health/health-routes.ts';
import { OPENAPI_ROUTE, type OpenApiRouteDeps } from '../openapi/openapi-route.ts';

/** Everything the routes need, built once per app by createApp. */
export interface ServiceDeps extends TokenRouteDeps, BookRouteDeps, ListRouteDeps, HealthRouteDeps, OpenApiRouteDeps, EventsRouteDeps, TicketRouteDeps {}

/**
 * Every route of the service, in the order the OpenAPI document lists them. A capability adds its
 * routes here; each carries its own handler and its own OpenAPI operation.
 */
export const ROUTE_TABLE: readonly Route<ServiceDeps>[] = [TOKEN_ROUTE, ...BOOK_ROUTES, CHANGES_ROUTE, EVENTS_ROUTE, TICKET_ROUTE, HEALTH_ROUTE, READINESS_ROUTE, OPENAPI_ROUTE];
