import { hash } from 'node:crypto';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_Q } from '../books/list-query.ts';
import { MAX_TEXT_LENGTH, MAX_YEAR, MIN_YEAR } from '../books/validate.ts';
import { MESSAGES, type Message } from '../errors.ts';
import { entityTagListMatches } from './entity-tags.ts';
import type { Header, OpenApiDocument, Operation, Parameter, PathItem, RequestBody, Response, ResponseRef, Schema } from './openapi-types.ts';
import type { Route } from './route.ts';
import type { RouteDefinition } from './router.ts';

const JSON_TYPE = 'application/json';
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: 'NotFound' | 'MethodNotAllowed' | 'PreflightAllowed'): ResponseRef => ({ $ref: `#/components/responses/${name}` });
const NULL: Schema = { type: 'null' };

const REQUEST_ID: Header = { description: 'The client\'s X-Request-Id when short visible ASCII, else a generated one.', schema: { type: 'string' } };
const ETAG: Header = {
  description: 'Strong entity tag of the book (RFC 9110 §8.8.3): send it back in If-Match to make a write conditional.',
  required: true,
  schema: { type: 'string' },
};

/** An envelope answer (docs/contract.md, "Envelope"): `status` equals the HTTP status, `message` is one of `messages`. */
function answer(status: number, messages: readonly Message[], data: Schema = NULL, headers: Record<string, Header> = {}): Response {
  return {
    description: messages.join(' | '),
    headers: { 'X-Request-Id': REQUEST_ID, ...headers },
    content: {
      [JSON_TYPE]: {
        schema: {
          type: 'object',
          required: ['status', 'message', 'data'],
          properties: { status: { const: status }, message: messages.length === 1 ? { const: messages[0] as Message } : { enum: messages }, data },
        },
      },
    },
  };
}

/** Answers any request can get from the transport (docs/contract.md, "Transport"). */
const TRANSPORT = {
  '408': answer(408, [MESSAGES.requestTimeout]),
  '431': answer(431, [MESSAGES.headersTooLarge]),
  '500': answer(500, [MESSAGES.internalError]),
} as const;
const WWW_AUTHENTICATE: Header = {
  description: 'The challenge every 401 carries (RFC 9110 §11.6.1): `Bearer realm="book-catalogue"`, plus `error="invalid_token"` when a sent token was refused.',
  required: true,
  schema: { type: 'string' },
};
const UNAUTHORIZED = answer(401, [MESSAGES.tokenRequired, MESSAGES.invalidToken], NULL, { 'WWW-Authenticate': WWW_AUTHENTICATE });
const TOO_LARGE = answer(413, [MESSAGES.payloadTooLarge]);
const PROTECTED = [{ rawToken: [] }, { bearer: [] }] as const;

const ID: Parameter = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'A book id. Any decimal digits naming a safe integer are accepted (`007` is 7); anything else is 400 `Invalid book id`.',
  schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
};
const IF_MATCH: Parameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: '`*` or entity tags from ETag (RFC 9110 §13.1.1, strong comparison). No match: 412, nothing changed.',
  schema: { type: 'string' },
};

function jsonBody(description: string, schema: Schema): RequestBody {
  return { required: true, description, content: { [JSON_TYPE]: { schema } } };
}

/** The headers of an answer without its body, for HEAD. */
function headersOnly(response: Response | ResponseRef): Response | ResponseRef {
  if (response.$ref !== undefined || response.content === undefined) return response;
  const { content: _body, ...rest } = response;
  return rest;
}

/** HEAD answers what GET answers, headers only: no body (docs/contract.md, "Paths and ids"). */
function headOf(get: Operation): Operation {
  const responses: Record<string, Response | ResponseRef> = {};
  for (const [status, response] of Object.entries(get.responses)) responses[status] = headersOnly(response);
  return { ...get, operationId: `${get.operationId}Head`, summary: `${get.summary} (headers only)`, responses };
}

/**
 * OPTIONS on a path the service serves: a CORS preflight from an allowed origin gets 200 with the
 * Access-Control-Allow-* headers, anything else 405 with `Allow` (docs/contract.md, "Cross-origin requests").
 */
function optionsOf(operationId: string): Operation {
  return {
    operationId,
    summary: 'CORS preflight when CORS_ORIGINS allows the Origin; otherwise 405 with Allow',
    tags: ['operations'],
    security: [],
    responses: { '200': responseRef('PreflightAllowed'), '405': responseRef('MethodNotAllowed'), ...TRANSPORT },
  };
}

/** Paths the service does not serve answer 404 `Not found` before anything else is checked. */
const NO_ROUTE = { '404': responseRef('NotFound') } as const;

const text = (what: string): Schema => ({
  type: 'string',
  minLength: 1,
  maxLength: MAX_TEXT_LENGTH,
  pattern: '\\S',
  description: `${what}: not blank, at most ${MAX_TEXT_LENGTH} Unicode code points, stored exactly as given.`,
});
const year: Schema = { type: 'integer', minimum: MIN_YEAR, maximum: MAX_YEAR, description: 'An integer value (2020, 2020.0 and 2e3 all are).' };

const QUERY_RULE = 'A parameter given twice, or a value outside its rule, is 400 `Invalid query`.';
const LIST_QUERY: readonly Parameter[] = [
  {
    name: 'limit',
    in: 'query',
    required: false,
    description: `At most this many books (${DEFAULT_LIMIT} when after or q is given without it). ${QUERY_RULE}`,
    schema: { type: 'string', pattern: '^[0-9]+$', description: `Decimal digits, 1 to ${MAX_LIMIT}.` },
  },
  {
    name: 'after',
    in: 'query',
    required: false,
    description: `Only books with a larger id: a keyset cursor (0: from the first book). ${QUERY_RULE}`,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'q',
    in: 'query',
    required: false,
    description: `Books whose title or author contains this text under Unicode simple case folding, no normalization. ${QUERY_RULE}`,
    schema: { type: 'string', minLength: 1, maxLength: MAX_Q, description: `1 to ${MAX_Q} Unicode code points.` },
  },
];
const getBooks: Operation = {
  operationId: 'listBooks',
  summary: 'Every book, ascending id; with limit, after or q, one page of them',
  tags: ['books'],
  security: PROTECTED,
  parameters: LIST_QUERY,
  responses: {
    '200': answer(200, [MESSAGES.booksRetrieved], { type: 'array', items: ref('Book') }, {
      Link: { description: 'With limit, after or q, when more books follow: `</books?limit=…&after=…[&q=…]>; rel="next"` (RFC 8288).', schema: { type: 'string' } },
      'X-Total-Count': { description: 'With limit, after or q: how many books match (without q, the catalogue size).', schema: { type: 'integer', minimum: 0 } },
    }),
    '400': answer(400, [MESSAGES.invalidQuery, MESSAGES.badRequest]),
    '401': UNAUTHORIZED,
    ...NO_ROUTE,
    ...TRANSPORT,
  },
};
const getBook: Operation = {
  operationId: 'getBook',
  summary: 'One book',
  tags: ['books'],
  security: PROTECTED,
  parameters: [ID],
  responses: {
    '200': answer(200, [MESSAGES.bookRetrieved], ref('Book'), { ETag: ETAG }),
    '400': answer(400, [MESSAGES.invalidBookId, MESSAGES.badRequest]),
    '401': UNAUTHORIZED,
    '404': answer(404, [MESSAGES.bookNotFound]),
    ...TRANSPORT,
  },
};
const SINCE: Parameter = {
  name: 'since',
  in: 'query',
  required: false,
  description: 'A change seq: answer the changes after it (default 0). Decimal digits, else 400 `Invalid query`.',
  schema: { type: 'string', pattern: '^[0-9]+$' },
};
const getChanges: Operation = {
  operationId: 'listChanges',
  summary: 'The durable changes after `since`, ascending seq (a change feed for clients that poll)',
  tags: ['events'],
  security: PROTECTED,
  parameters: [
    SINCE,
    { name: 'limit', in: 'query', required: false, description: '1 to 1000, default 1000.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  ],
  responses: {
    '200': answer(200, [MESSAGES.changesRetrieved], { type: 'array', items: ref('Change') }, {
      Link: { description: '`</changes?since=N&limit=L>; rel="next"` while more changes follow (RFC 8288).', schema: { type: 'string' } },
    }),
    '400': answer(400, [MESSAGES.invalidQuery, MESSAGES.badRequest]),
    '401': UNAUTHORIZED,
    '410': answer(410, [MESSAGES.changesUnavailable]),
    ...TRANSPORT,
  },
};
const getHealth: Operation = {
  operationId: 'health',
  summary: 'Liveness: 200 while the process serves (503 while it drains)',
  tags: ['operations'],
  security: [],
  responses: {
    '200': answer(200, [MESSAGES.ok], { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }),
    '400': answer(400, [MESSAGES.badRequest]),
    ...NO_ROUTE,
    '503': answer(503, [MESSAGES.shuttingDown]),
    ...TRANSPORT,
  },
};
const getReadiness: Operation = {
  operationId: 'readiness',
  summary: 'Readiness: 200 only while a write would be accepted',
  description: '503 while the service drains, while the store refuses writes until a restart, and after a failed write until the store has written durably again by itself.',
  tags: ['operations'],
  security: [],
  responses: {
    '200': answer(200, [MESSAGES.ok], { type: 'object', required: ['status'], properties: { status: { const: 'ready' } } }),
    '400': answer(400, [MESSAGES.badRequest]),
    ...NO_ROUTE,
    '503': answer(503, [MESSAGES.notReady]),
    ...TRANSPORT,
  },
};
const DOCUMENT_ETAG: Header = {
  description: 'Strong entity tag of the document; it changes only when the document does (a new version).',
  required: true,
  schema: { type: 'string' },
};
const getDocument: Operation = {
  operationId: 'openapi',
  summary: 'This document (not wrapped in the envelope, so OpenAPI tools read it as is)',
  description: 'Cacheable (`Cache-Control: no-cache`): send the ETag back in If-None-Match and a current copy gets 304, no body.',
  tags: ['operations'],
  security: [],
  parameters: [
    {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: '`*` or entity tags from ETag (RFC 9110 §13.1.2, weak comparison): a match answers 304.',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': { description: 'The OpenAPI 3.1 document', headers: { ETag: DOCUMENT_ETAG }, content: { [JSON_TYPE]: { schema: ref('OpenApiDocument') } } },
    '304': { description: 'The copy the client holds is current (If-None-Match matched); no body.', headers: { ETag: DOCUMENT_ETAG } },
    ...NO_ROUTE,
    ...TRANSPORT,
  },
};

/** Every path item also documents OPTIONS: the answer the route check gives it. */
function withOptions(name: string, item: PathItem): PathItem {
  return { ...item, options: optionsOf(`${name}Options`) };
}

/** Where the operations are when no mount path is given: relative to the document's own URL. */
export const DEFAULT_SERVER_URL = '.';

/**
 * The service's OpenAPI 3.1 document; its (path, method) set is the router's plus OPTIONS on every
 * path (test/openapi.test.ts).
 */
export const OPENAPI_DOCUMENT: OpenApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Book catalogue',
    // The document's own version (OpenAPI 3.1 §4.8.2), raised when the interface changes.
    version: '1.0.0',
    description:
      'Every answer is the envelope {status, message, data} with Content-Type application/json; charset=utf-8, ' +
      'except GET /openapi.json. Checks run in this order: route (404 `Not found`, then 405 `Method not allowed` ' +
      'with Allow), token (401), {id} (400), body. Bodies over 64 KiB: 413. With CORS_ORIGINS set, an allowed ' +
      'origin\'s preflight (OPTIONS) gets 200 `OK` with the Access-Control-Allow-* headers. ' +
      'The rules behind every answer: docs/contract.md in the repository.',
  },
  servers: [{ url: DEFAULT_SERVER_URL, description: 'Where this document is served from: the catalogue\'s own base URL.' }],
  paths: {
    '/token': withOptions('token', {
      post: {
        operationId: 'createToken',
        summary: 'Exchange the credential pair for a 15-minute HS256 JWT',
        tags: ['auth'],
        security: [],
        requestBody: jsonBody('Parsed as JSON whatever the Content-Type.', ref('LoginRequest')),
        responses: {
          '200': answer(200, [MESSAGES.tokenGenerated], ref('Token')),
          '400': answer(400, [MESSAGES.invalidRequestPayload, MESSAGES.badRequest]),
          '401': answer(401, [MESSAGES.invalidCredentials], NULL, { 'WWW-Authenticate': WWW_AUTHENTICATE }),
          '413': TOO_LARGE,
          '429': answer(429, [MESSAGES.tooManyLoginAttempts], NULL, {
            'Retry-After': { description: 'Seconds until this address may try again.', required: true, schema: { type: 'integer', minimum: 1 } },
          }),
          ...TRANSPORT,
          ...NO_ROUTE,
          '500': answer(500, [MESSAGES.couldNotGenerateToken, MESSAGES.internalError]),
        },
      },
    }),
    '/book': withOptions('book', {
      post: {
        operationId: 'createBook',
        summary: 'Create a book; the service assigns its id',
        tags: ['books'],
        security: PROTECTED,
        requestBody: jsonBody('`id` and unknown keys are ignored.', ref('BookInput')),
        responses: {
          '201': answer(201, [MESSAGES.bookCreated], ref('Book'), { ETag: ETAG }),
          '400': answer(400, [MESSAGES.invalidInput, MESSAGES.badRequest]),
          '401': UNAUTHORIZED,
          ...NO_ROUTE,
          '413': TOO_LARGE,
          ...TRANSPORT,
        },
      },
    }),
    '/books': withOptions('books', { get: getBooks, head: headOf(getBooks) }),
    '/book/{id}': withOptions('bookById', {
      get: getBook,
      head: headOf(getBook),
      put: {
        operationId: 'updateBook',
        summary: 'Update a book: absent fields keep their value, `{}` changes nothing',
        tags: ['books'],
        security: PROTECTED,
        parameters: [ID, IF_MATCH],
        requestBody: jsonBody('Each field present must pass the rule of POST /book.', ref('BookPatch')),
        responses: {
          '200': answer(200, [MESSAGES.bookUpdated], ref('Book'), { ETag: ETAG }),
          '400': answer(400, [MESSAGES.invalidBookId, MESSAGES.invalidInput, MESSAGES.badRequest]),
          '401': UNAUTHORIZED,
          '404': answer(404, [MESSAGES.bookNotFound]),
          '412': answer(412, [MESSAGES.preconditionFailed]),
          '413': TOO_LARGE,
          ...TRANSPORT,
        },
      },
      delete: {
        operationId: 'deleteBook',
        summary: 'Delete a book; its id is never reused',
        tags: ['books'],
        security: PROTECTED,
        parameters: [ID, IF_MATCH],
        responses: {
          '200': answer(200, [MESSAGES.bookDeleted]),
          '400': answer(400, [MESSAGES.invalidBookId, MESSAGES.badRequest]),
          '401': UNAUTHORIZED,
          '404': answer(404, [MESSAGES.bookNotFound]),
          '412': answer(412, [MESSAGES.preconditionFailed]),
          ...TRANSPORT,
        },
      },
    }),
    '/changes': withOptions('changes', { get: getChanges, head: headOf(getChanges) }),
    '/healthz': withOptions('health', { get: getHealth, head: headOf(getHealth) }),
    '/readyz': withOptions('readiness', { get: getReadiness, head: headOf(getReadiness) }),
    '/openapi.json': withOptions('openapi', { get: getDocument, head: headOf(getDocument) }),
  },
  components: {
    schemas: {
      Book: {
        type: 'object',
        required: ['id', 'title', 'author', 'year'],
        properties: { id: { type: 'integer', minimum: 1 }, title: text('Title'), author: text('Author'), year },
      },
      BookInput: { type: 'object', required: ['title', 'author', 'year'], properties: { title: text('Title'), author: text('Author'), year } },
      BookPatch: { type: 'object', properties: { title: text('Title'), author: text('Author'), year } },
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
      LoginRequest: { type: 'object', required: ['username', 'password'], properties: { username: { type: 'string' }, password: { type: 'string' } } },
      Token: { type: 'object', required: ['token'], properties: { token: { type: 'string', description: 'HS256 JWT; exp is 900 s after iat.' } } },
      OpenApiDocument: {
        type: 'object',
        description: 'An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0): this one.',
        required: ['openapi', 'info', 'servers', 'paths', 'components'],
        properties: {
          openapi: { type: 'string', pattern: '^3\\.1\\.\\d+$' },
          info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' }, description: { type: 'string' } } },
          servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' }, description: { type: 'string' } } } },
          paths: { type: 'object' },
          components: { type: 'object' },
        },
      },
    },
    responses: {
      NotFound: { ...answer(404, [MESSAGES.notFound]), description: 'Not found: the path is not one the service serves (checked first, before method, token and body).' },
      MethodNotAllowed: answer(405, [MESSAGES.methodNotAllowed], NULL, {
        Allow: { description: 'The methods the path supports, sorted, HEAD wherever GET.', required: true, schema: { type: 'string' } },
      }),
      PreflightAllowed: answer(200, [MESSAGES.ok]),
    },
    securitySchemes: {
      rawToken: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The token itself, no scheme prefix (docs/contract.md, "Authentication").' },
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: '`Bearer <token>`, scheme in any case.' },
    },
  },
};

/**
 * GET /openapi.json: public, serialized once per app with its `servers` URL (`mountPath`, or
 * relative to the document's own URL). Cacheable: it changes only with the version, so it carries
 * a strong ETag and `no-cache`, and a matching If-None-Match answers 304 (RFC 9110 §13.1.2).
 */
export function openApiRoute(serverUrl: string = DEFAULT_SERVER_URL): RouteDefinition<Route> {
  const document: OpenApiDocument =
    serverUrl === DEFAULT_SERVER_URL ? OPENAPI_DOCUMENT : { ...OPENAPI_DOCUMENT, servers: [{ url: serverUrl, description: 'Where the embedding application mounts the catalogue.' }] };
  let served: { body: string; headers: Record<string, string> } | undefined;
  return {
    method: 'GET',
    pattern: '/openapi.json',
    handler: {
      auth: false,
      handle: ({ req }) => {
        if (served === undefined) {
          const body = JSON.stringify(document);
          served = { body, headers: { etag: `"${hash('sha256', body, 'base64url')}"`, 'cache-control': 'no-cache' } };
        }
        const condition = req.headers['if-none-match'];
        // A 304 keeps the 200's Content-Length (RFC 9110 §8.6); Node sends no body with it.
        const status = condition !== undefined && entityTagListMatches(condition, served.headers.etag as string, 'weak') ? 304 : 200;
        return { status, message: MESSAGES.ok, data: served.body, body: served.body, headers: served.headers };
      },
    },
  };
}
