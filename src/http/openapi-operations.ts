import { ANSWERS, type Message, type MessageOf } from './messages.ts';
import type { Header, Operation, OperationMethod, Parameter, PathItem, RequestBody, Response, ResponseRef, Schema } from './openapi-types.ts';
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

/** `If-Match` on a read or a write (docs/contract.md, "Conditional requests"). */
export const IF_MATCH: Parameter = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: '`*` or entity tags from ETag (RFC 9110 §13.1.1, strong comparison: a weak `W/` tag never matches). No match: 412, nothing changed.',
  schema: { type: 'string' },
};
const IF_NONE_MATCH_READ: Parameter = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: '`*` or entity tags from ETag (RFC 9110 §13.1.2, weak comparison): a match answers 304 with no body.',
  schema: { type: 'string' },
};
/** `If-None-Match` on a write: `*` matches any current book, so `If-None-Match: *` never overwrites one. */
export const IF_NONE_MATCH_WRITE: Parameter = {
  ...IF_NONE_MATCH_READ,
  description: '`*` or entity tags from ETag (RFC 9110 §13.1.2, weak comparison). A match (`*` matches any current book): 412, nothing changed.',
};
export const PRECONDITION_FAILED = answer(412, [ANSWERS.preconditionFailed.message]);

/** docs/contract.md, "Compression": which reads' answers are gzip-encoded, and how a cache tells the forms apart. */
const CONTENT_ENCODING: Header = {
  description: '`gzip` when the request\'s Accept-Encoding takes gzip (RFC 9110 §12.5.3) and the answer is 1 KiB or more (an envelope whose `data` is 1024 characters or more; a document of 1024 bytes or more); then its ETag, when it has one, is the gzip form\'s, `-gzip` inside the quotes. Absent: sent as it is.',
  schema: { type: 'string', enum: ['gzip'] },
};
const VARY: Header = {
  description: '`Accept-Encoding` on an answer of 1 KiB or more (as Content-Encoding counts it), whichever coding it was sent in (`Origin, Accept-Encoding` while CORS is on for listed origins).',
  schema: { type: 'string' },
};

/**
 * The coding a 200 may be sent in (http/content-coding.ts encodes every 200 of 1 KiB or more, whatever
 * the method: a PUT's answer carrying a long book too). An event stream (GET /events) is never encoded.
 */
function encodable(operation: Operation): Operation {
  const ok = operation.responses['200'];
  if (ok === undefined || ok.$ref !== undefined) return operation;
  return { ...operation, responses: { ...operation.responses, '200': { ...ok, headers: { ...ok.headers, 'Content-Encoding': CONTENT_ENCODING, Vary: VARY } } } };
}

/**
 * A read's preconditions, documented where the reply writer evaluates them (RFC 9110 §13.2.2): the
 * two headers, 304 with the fields §15.4.5 asks for (the ETag when the 200 has one, Vary), and
 * 412; and the coding its 200 may be sent in (http/content-coding.ts).
 */
function conditionalRead(get: Operation): Operation {
  const { '200': ok, ...others } = get.responses;
  const etag = ok?.headers?.ETag;
  const notModified: Response = {
    description: 'The copy the client holds is current (If-None-Match matched): no body, and only the ETag, Cache-Control and Vary a 200 would carry.',
    headers: etag === undefined ? { Vary: VARY, 'X-Request-Id': REQUEST_ID } : { ETag: etag, Vary: VARY, 'X-Request-Id': REQUEST_ID },
  };
  return {
    ...get,
    parameters: [...(get.parameters ?? []), IF_MATCH, IF_NONE_MATCH_READ],
    responses: { ...(ok !== undefined && { '200': ok }), '304': notModified, '412': PRECONDITION_FAILED, ...others },
  };
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
 * OPTIONS on a path the service serves (docs/contract.md, "Cross-origin requests"): with CORS on,
 * 200 with `Allow`, plus the Access-Control-Allow-* headers for a preflight from an allowed origin;
 * with CORS off, 405 with `Allow`. It declares the path's parameters as every operation must
 * (OpenAPI 3.1 §4.8.9), so a generated client fills them in.
 */
function optionsOf(operationId: string, parameters: readonly Parameter[]): Operation {
  return {
    operationId,
    summary: 'With CORS_ORIGINS set: 200 with Allow (and the CORS preflight headers for an allowed Origin); otherwise 405 with Allow',
    tags: ['operations'],
    security: [],
    ...(parameters.length > 0 && { parameters }),
    responses: { '200': responseRef('PreflightAllowed'), '405': responseRef('MethodNotAllowed'), ...TRANSPORT },
  };
}

/**
 * The document's `paths`, from the route table: each route's own operation (its 200's coding, a
 * read's preconditions), HEAD wherever GET, and OPTIONS on every path (the answer the route check gives it).
 */
export function pathsOf(routes: readonly Route<never>[]): Record<string, PathItem> {
  const paths: Record<string, Partial<Record<OperationMethod, Operation>>> = {};
  const names = new Map<string, string>();
  const pathParameters = new Map<string, readonly Parameter[]>();
  for (const route of routes) {
    const item = (paths[route.pattern] ??= {});
    const method = route.method.toLowerCase() as OperationMethod;
    const operation = route.stream === true ? route.operation : method === 'get' ? conditionalRead(encodable(route.operation)) : encodable(route.operation);
    item[method] = operation;
    if (method === 'get') item.head = headOf(operation);
    if (route.pathName !== undefined) names.set(route.pattern, route.pathName);
    const inPath = (operation.parameters ?? []).filter((p) => p.in === 'path');
    if (inPath.length > 0) pathParameters.set(route.pattern, inPath);
  }
  for (const [pattern, item] of Object.entries(paths)) {
    const name = names.get(pattern);
    if (name === undefined) throw new TypeError(`no route of ${pattern} gives the path its pathName`);
    item.options = optionsOf(`${name}Options`, pathParameters.get(pattern) ?? []);
  }
  return paths;
}
