import type { IncomingMessage } from 'node:http';
import { ConfigError } from '../faults.ts';

/**
 * Request headers a browser may send: the token, JSON bodies, conditional requests, tracing, and
 * what event-stream clients built on fetch send: `Last-Event-ID` to resume, `Cache-Control:
 * no-cache` (EventSource polyfills). Without them the browser refuses the preflight of every
 * resume from another origin (docs/contract.md, "Cross-origin requests").
 */
export const ALLOW_HEADERS = 'Authorization, Cache-Control, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id';
/**
 * Response headers a page may read beyond the CORS-safelisted ones: `WWW-Authenticate` says why a
 * 401 came (expired or refused token), `Allow` what a 405'd path takes.
 */
export const EXPOSE_HEADERS = 'Allow, ETag, Link, Location, Retry-After, WWW-Authenticate, X-Last-Seq, X-Request-Id, X-Total-Count';
/** Seconds a browser may reuse a preflight answer. */
export const PREFLIGHT_MAX_AGE = '600';

export interface Cors {
  /** Headers for an ordinary answer to a request with this `Origin` header. */
  responseHeaders(origin: string | undefined): Record<string, string>;
  /**
   * Headers for a preflight (Fetch standard, "CORS-preflight request": OPTIONS with `Origin` and
   * `Access-Control-Request-Method`) from an allowed origin; undefined otherwise, so the request
   * is an ordinary OPTIONS (200 with `Allow` alone, docs/contract.md, "Cross-origin requests").
   */
  preflightHeaders(req: IncomingMessage, allow: string): Record<string, string> | undefined;
}

/**
 * `CORS_ORIGINS`: comma-separated origins exactly as browsers send them (scheme, host, port, no
 * path), or `*` for any. Empty means CORS stays off.
 */
export function parseCorsOrigins(text: string): string[] {
  const origins = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const origin of origins) {
    if (origin !== '*' && !isSerializedOrigin(origin)) {
      throw new ConfigError(
        `invalid CORS_ORIGINS entry ${JSON.stringify(origin)}: expected * or an origin such as https://app.example.com (scheme, host and port only)`,
      );
    }
  }
  return origins;
}

function isSerializedOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text;
  } catch {
    return false;
  }
}

/** undefined when no origin is configured: CORS off, no header added anywhere. */
export function createCors(origins: readonly string[]): Cors | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const allowed = new Set(origins);
  const allowOrigin = (origin: string | undefined): string | undefined => {
    if (origin === undefined) return undefined;
    if (any) return '*';
    return allowed.has(origin) ? origin : undefined;
  };
  // The answer depends on Origin unless every origin gets `*` (Fetch standard, "CORS protocol and HTTP caches").
  const vary: Record<string, string> = any ? {} : { vary: 'Origin' };
  const anyOrigin = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSE_HEADERS };
  return {
    responseHeaders(origin) {
      const allow = allowOrigin(origin);
      if (allow === undefined) return vary;
      // Object literals, not `{ ...vary, … }`: see envelopeReply in respond.ts.
      return any ? anyOrigin : { vary: 'Origin', 'access-control-allow-origin': allow, 'access-control-expose-headers': EXPOSE_HEADERS };
    },
    preflightHeaders(req, allow) {
      if (req.method !== 'OPTIONS' || req.headers['access-control-request-method'] === undefined) return undefined;
      const allowedOrigin = allowOrigin(req.headers.origin);
      if (allowedOrigin === undefined) return undefined;
      return {
        'access-control-allow-origin': allowedOrigin,
        'access-control-allow-methods': allow,
        'access-control-allow-headers': ALLOW_HEADERS,
        'access-control-max-age': PREFLIGHT_MAX_AGE,
        vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      };
    },
  };
}
