import { ANSWERS } from '../http/messages.ts';
import type { Header, Operation } from '../http/openapi-types.ts';
import { NO_ROUTE } from '../http/openapi-operations.ts';
import { envelopeReply } from '../http/respond.ts';
import type { Reply, Route } from '../http/route.ts';
import type { UiAsset, UiAssets } from './assets.ts';

/**
 * The page runs only its own files: no inline script or style, no eval, no other origin, no
 * framing (clickjacking), no form posting anywhere (the forms are handled by script; without it a
 * sign-in form must not put the password in a URL), no <base> rewriting.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
} as const;

/** The page's URL never changes, so it is revalidated each time (a 304 is a few bytes). */
const REVALIDATE = 'no-cache';
/** Asset URLs carry the hash of every asset, so a URL's bytes never change. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_FOUND = envelopeReply(ANSWERS.notFound, 'null');

/**
 * A file with its ETag, as the reply served every time: a current copy (If-None-Match) gets 304
 * from the reply writer (RFC 9110 §13.1.2), and its gzip form is made once (http/content-coding.ts).
 */
function served(file: UiAsset, cacheControl: string, extra: Readonly<Record<string, string>> = {}): Reply {
  return { status: 200, body: file.body, headers: { ...extra, 'content-type': file.contentType, 'cache-control': cacheControl, etag: file.etag } };
}

const ETAG: Header = { description: 'Strong entity tag: a hash of the bytes.', required: true, schema: { type: 'string' } };

/** Operations for the route table's shape; the OpenAPI document notes GET / in its description instead of listing it. */
function operation(operationId: string, summary: string, contentType: string): Operation {
  return {
    operationId,
    summary,
    tags: ['web page'],
    security: [],
    responses: {
      '200': { description: summary, headers: { ETag: ETAG }, content: { [contentType]: { schema: { type: 'string' } } } },
      '304': { description: 'The copy the client holds is current (If-None-Match matched); no body.', headers: { ETag: ETAG } },
      ...NO_ROUTE,
    },
  };
}

/**
 * `GET /` (the page) and `GET /ui/{version}/{file}` (its scripts, style and icon): the documented
 * exception to the envelope, in the route table only when an app is created with `ui: true`. An
 * asset of another version, or an unknown one, is the ordinary 404.
 */
export function uiRoutes(assets: UiAssets): Route[] {
  const page = served(assets.page, REVALIDATE, PAGE_HEADERS);
  const files = new Map([...assets.files].map(([name, file]) => [name, served(file, IMMUTABLE)]));
  return [
    {
      method: 'GET',
      pattern: '/',
      pathName: 'page',
      auth: false,
      operation: operation('page', 'The built-in catalogue page', 'text/html'),
      handler: () => () => page,
    },
    {
      method: 'GET',
      pattern: '/ui/{version}/{file}',
      pathName: 'pageAsset',
      auth: false,
      operation: operation('pageAsset', "A script, style or icon of the page (the version is a hash of them all)", 'text/javascript'),
      handler: () => (ctx) => {
        const file = ctx.params.version === assets.version ? files.get(ctx.params.file as string) : undefined;
        return file ?? NOT_FOUND;
      },
    },
  ];
}
