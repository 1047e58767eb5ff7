import { ANSWERS, type Message, type MessageOf } from './messages.ts';
import type { Header, Operation, OperationMethod, PathItem, RequestBody, Response, ResponseRef, Schema } from './openapi-types.ts';
import type { Route } from './route.ts';

/** The pieces every route's operation is written from (OpenAPI 3.1, https://spec.openapis.org/oas/v3.1.0). */
export const JSON_TYPE = 'application/json';
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: 'NotFound' | 'MethodNotAllowed' | 'PreflightAllowed'): ResponseRef => ({ $ref: `#/components/responses/${name}` });
export const NULL: Schema = { type: 'null' };

export const REQUEST_ID: Header = { description: 'The client\'s X-Request-Id when short visible ASCII, else a generated one.', schema: { type: 'string' } };

/** An envelope answer (docs/contract.md, "Envelope"): `status` equals the HTTP status, `message` is one of `messages`. */
export function answer<S extends number>(
  status: S,
  messages: readonly MessageOf<S>[],
  data: Schema = NULL,
  headers: Record<string, Header> = {},
): Response {
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
export const TRANSPORT = {
  '408': answer(408, [ANSWERS.requestTimeout.message]),
  '421': answer(421, [ANSWERS.misdirectedRequest.message]),
  '431': answer(431, [ANSWERS.headersTooLarge.message]),
  '500': answer(500, [ANSWERS.internalError.message]),
} as const;
/** The challenge header every 401 carries. */
export const WWW_AUTHENTICATE: Header = {
  description: 'The challenge every 401 carries (RFC 9110 §11.6.1): `Bearer realm="book-catalogue"`, plus `error="invalid_token"` when a sent token was refused.',
  required: true,
  schema: { type: 'string' },
};
export const UNAUTHORIZED = answer(401, [ANSWERS.tokenRequired.message, ANSWERS.invalidToken.message], NULL, { 'WWW-Authenticate': WWW_AUTHENTICATE });
export const TOO_LARGE = answer(413, [ANSWERS.payloadTooLarge.message]);
/** A protected operation: the token alone or `Bearer <token>` (docs/contract.md, "Authentication"). */
export const PROTECTED = [{ rawToken: [] }, { bearer: [] }] as const;
/** Paths the service does not serve answer 404 `Not found` before anything else is checked. */
export const NO_ROUTE = { '404': responseRef('NotFound') } as const;

export function jsonBody(description: string, schema: Schema): RequestBody {
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

/**
 * The document's `paths`, from the route table: each route's own operation, HEAD wherever GET,
 * and OPTIONS on every path (the answer the route check gives it).
 */
export function pathsOf(routes: readonly Route<never>[]): Record<string, PathItem> {
  const paths: Record<string, Partial<Record<OperationMethod, Operation>>> = {};
  const names = new Map<string, string>();
  for (const route of routes) {
    const item = (paths[route.pattern] ??= {});
    const method = route.method.toLowerCase() as OperationMethod;
    item[method] = route.operation;
    if (method === 'get') item.head = headOf(route.operation);
    if (route.pathName !== undefined) names.set(route.pattern, route.pathName);
  }
  for (const [pattern, item] of Object.entries(paths)) {
    const name = names.get(pattern);
    if (name === undefined) throw new TypeError(`no route of ${pattern} gives the path its pathName`);
    item.options = optionsOf(`${name}Options`);
  }
  return paths;
}
