import { TICKET_SCHEMAS } from '../auth/ticket-route.ts';
import { TOKEN_SCHEMAS } from '../auth/token-route.ts';
import { BOOK_SCHEMAS } from '../books/book-routes.ts';
import { CHANGE_SCHEMAS } from '../events/changes-route.ts';
import { ConfigError } from '../faults.ts';
import { ALLOW_HEADERS, EXPOSE_HEADERS, PREFLIGHT_MAX_AGE } from '../http/cors.ts';
import { ANSWERS } from '../http/messages.ts';
import { answer, NULL, pathsOf } from '../http/openapi-operations.ts';
import type { Header, OpenApiDocument } from '../http/openapi-types.ts';
import { OPENAPI_SCHEMAS } from '../openapi/openapi-route.ts';
import { ROUTE_TABLE } from './route-table.ts';

const ALLOW: Header = {
  description: 'The methods the path supports, sorted: HEAD wherever GET, OPTIONS when CORS_ORIGINS is set.',
  required: true,
  schema: { type: 'string' },
};

/** docs/contract.md, "Cross-origin requests": what a preflight from an allowed origin also gets. */
const PREFLIGHT: Record<string, Header> = {
  'Access-Control-Allow-Origin': { description: 'A preflight from an origin in CORS_ORIGINS: that origin, or `*` when any is allowed.', schema: { type: 'string' } },
  'Access-Control-Allow-Methods': { description: 'A preflight from an allowed origin: the same list as Allow.', schema: { type: 'string' } },
  'Access-Control-Allow-Headers': { description: `A preflight from an allowed origin: \`${ALLOW_HEADERS}\`.`, schema: { type: 'string' } },
  'Access-Control-Max-Age': { description: `A preflight from an allowed origin: \`${PREFLIGHT_MAX_AGE}\` (seconds).`, schema: { type: 'integer' } },
};

/** Where the operations are when no mount path is given: relative to the document's own URL. */
export const DEFAULT_SERVER_URL = '.';

/**
 * The service's OpenAPI 3.1 document, built from the route table: each path is its routes' own
 * operations, plus OPTIONS on every path (test/openapi.test.ts).
 */
export const OPENAPI_DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Book catalogue',
    // The document's own version (OpenAPI 3.1 §4.8.2), raised when the interface changes.
    version: '1.0.0',
    license: { name: 'MIT', identifier: 'MIT' },

    description:
      'Every answer is the envelope {status, message, data} with Content-Type application/json; charset=utf-8, ' +
      'except GET /openapi.json. Checks run in this order: route (404 `Not found`, then 405 `Method not allowed` ' +
      'with Allow), token (401), {id} (400), body, then If-Match and If-None-Match (412, or 304 on a read). ' +
      'Bodies over 64 KiB: 413. With CORS_ORIGINS set, OPTIONS on every path gets 200 `OK` with Allow, and an ' +
      'allowed origin\'s preflight also the Access-Control-Allow-* headers; every answer to an allowed origin ' +
      `exposes \`${EXPOSE_HEADERS}\`. \`OPTIONS *\` (the server as a whole) ` +
      'gets 200 `OK` with Allow listing every method the server has. ' +
      'GET / is the built-in web page (text/html, not an envelope; its scripts and style under /ui/{version}/), ' +
      'served by the command line unless UI=off or --no-ui, and by the library only with ui: true; when off, / is 404. ' +
      'The rules behind every answer: docs/contract.md in the repository.',
  },
  servers: [{ url: DEFAULT_SERVER_URL, description: 'Where this document is served from: the catalogue\'s own base URL.' }],
  paths: pathsOf(ROUTE_TABLE),
  components: {
    schemas: { ...BOOK_SCHEMAS, ...CHANGE_SCHEMAS, ...TOKEN_SCHEMAS, ...TICKET_SCHEMAS, ...OPENAPI_SCHEMAS },
    responses: {
      NotFound: { ...answer(404, [ANSWERS.notFound.message]), description: 'Not found: the path is not one the service serves (checked first, before method, token and body).' },
      MethodNotAllowed: answer(405, [ANSWERS.methodNotAllowed.message], NULL, {
        Allow: ALLOW,
      }),
      PreflightAllowed: answer(200, [ANSWERS.ok.message], NULL, { Allow: ALLOW, ...PREFLIGHT }),
    },
    securitySchemes: {
      rawToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The token itself, no scheme prefix (docs/contract.md, "Authentication").' },
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: '`Bearer <token>`, scheme in any case.' },
      eventTicket: {
        type: 'apiKey',
        in: 'query',
        name: 'ticket',
        description: 'GET /events only, when no Authorization header is sent: a ticket from POST /events/ticket (docs/contract.md, "Event tickets").',
      },
    },
  },
};

/**
 * The document an app serves: `servers` is where the embedding server mounts it (`/catalogue`, or
 * an absolute `https://…` URL), so "Try it out" calls the catalogue and not the host.
 */
export function documentMountedAt(mountPath: string | undefined): OpenApiDocument {
  if (mountPath === undefined) return OPENAPI_DOCUMENT;
  if (!/^(\/|https?:\/\/)[^\s]*$/.test(mountPath)) {
    throw new ConfigError(`invalid mountPath ${JSON.stringify(mountPath)}: expected a path such as /catalogue or an absolute http(s) URL`);
  }
  return { ...OPENAPI_DOCUMENT, servers: [{ url: mountPath, description: 'Where the embedding application mounts the catalogue.' }] };
}
