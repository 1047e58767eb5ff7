import { hash } from 'node:crypto';
import { JSON_TYPE, NO_ROUTE, ref, TRANSPORT } from '../http/openapi-operations.ts';
import type { Header, OpenApiDocument, Schema } from '../http/openapi-types.ts';
import { defineRoute, type DocumentReply, type Reply } from '../http/route.ts';

export interface OpenApiRouteDeps {
  /** This app's document (its `servers` URL is the app's mount path). */
  readonly openApiDocument: OpenApiDocument;
}

/** The schema GET /openapi.json's operation refers to. */
export const OPENAPI_SCHEMAS: Readonly<Record<string, Schema>> = {
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
};

const DOCUMENT_ETAG: Header = {
  description: 'Strong entity tag of the document; it changes only when the document does (a new version).',
  required: true,
  schema: { type: 'string' },
};

/**
 * GET /openapi.json: public, serialized once per app. Cacheable: it changes only with the version,
 * so it carries a strong ETag and `no-cache`, and a matching If-None-Match answers 304 (RFC 9110 §13.1.2).
 */
export const OPENAPI_ROUTE = defineRoute({
  method: 'GET',
  pattern: '/openapi.json',
  pathName: 'openapi',
  auth: false,
  operation: {
    operationId: 'openapi',
    summary: 'This document (not wrapped in the envelope, so OpenAPI tools read it as is)',
    description: 'Cacheable (`Cache-Control: no-cache`): send the ETag back in If-None-Match and a current copy gets 304, no body.',
    tags: ['operations'],
    security: [],
    responses: {
      '200': { description: 'The OpenAPI 3.1 document', headers: { ETag: DOCUMENT_ETAG }, content: { [JSON_TYPE]: { schema: ref('OpenApiDocument') } } },
      ...NO_ROUTE,
      ...TRANSPORT,
    },
  },
  handler({ openApiDocument }: OpenApiRouteDeps) {
    let served: DocumentReply | undefined;
    return (): Reply => {
      if (served === undefined) {
        // Encoded once: the same reply each time, whose gzip form the reply writer then makes once too (http/content-coding.ts).
        const body = Buffer.from(JSON.stringify(openApiDocument), 'utf8');
        // If-None-Match is answered by the reply writer against this ETag (docs/contract.md, "Conditional requests").
        served = { status: 200, body, headers: { etag: `"${hash('sha256', body, 'base64url')}"`, 'cache-control': 'no-cache' } };
      }
      return served;
    };
  },
});
