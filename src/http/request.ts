import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { trimOws } from './header-value.ts';

/** A client-supplied request id is echoed only when it is short, visible ASCII (no log injection). */
export function requestIdFrom(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  const given = typeof header === 'string' ? trimOws(header) : undefined;
  if (given !== undefined && given.length > 0 && given.length <= 128) {
    let ok = true;
    for (let i = 0; i < given.length && ok; i++) {
      const c = given.charCodeAt(i);
      ok = c > 32 && c < 127;
    }
    if (ok) return given;
  }
  return randomUUID();
}

/**
 * The path of the request target without its query: origin-form as is, absolute-form from the
 * first `/` after the authority (servers must accept it, RFC 9112 §3.2.2). Anything else (the
 * asterisk-form) is returned unchanged and matches no route.
 */
export function pathOf(url: string): string {
  let start = 0;
  if (url.charCodeAt(0) !== 47 /* / */) {
    const authority = url.indexOf('://');
    if (authority === -1) return url;
    start = url.indexOf('/', authority + 3);
    if (start === -1) return '/';
  }
  const q = url.indexOf('?', start);
  if (q === -1) return start === 0 ? url : url.slice(start);
  return url.slice(start, q);
}

/**
 * True when the answer goes out before the request's body was read (401, 404, 412, 429, 400 for
 * an id): keeping the connection would make Node drain an upload nobody wants, for up to the
 * request timeout. A request without a body is complete as soon as its headers are parsed.
 */
export function unreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
