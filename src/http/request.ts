import type { IncomingMessage } from 'node:http';
import { BODY_LIMIT } from './body.ts';
import { continueOwed } from './continue.ts';
import { trimOws } from './header-value.ts';
import { RequestIds } from './request-ids.ts';

/** One counter for the process, made at its first answer: ids stay unique across the apps and servers it runs. */
let generated: RequestIds | undefined;

/** A request id for an answer whose request gave none (or none that can be echoed). */
export function newRequestId(): string {
  generated ??= new RequestIds();
  return generated.next();
}

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
  return newRequestId();
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
 * Whether an answer sent before the request's body was read (401, 404, 405, 412, 429, 400 for an
 * id, a GET with a body) must close the connection (docs/contract.md, "Bodies"). A declared body
 * within the 64 KiB limit is cheap to read and discard (Node does so once the answer is sent), so
 * the connection is kept; a larger or chunked one would be an upload nobody wants, read for up to
 * the request timeout; and after an `Expect: 100-continue` left unanswered the client may or may
 * not send its body, so the next request's start is unknown. A request without a body is
 * complete as soon as its headers are parsed.
 */
export function unreadBodyForcesClose(req: IncomingMessage): boolean {
  if (req.complete) return false;
  if (req.headers['transfer-encoding'] !== undefined || continueOwed(req)) return true;
  const length = req.headers['content-length'];
  return length !== undefined && !(Number(length) <= BODY_LIMIT);
}

/**
 * RFC 9112 §3.2: more than one Host is a 400; more than one Authorization is refused too, since a
 * proxy reading the last one would authorise a token other than the one checked here (Node keeps
 * the first). A request without a version (HTTP/0.9, `GET /`) is not HTTP/1.x and is refused.
 */
export function malformedRequest(req: IncomingMessage): boolean {
  if (req.httpVersionMajor !== 1) return true;
  if (req.headers.host === undefined) return req.httpVersionMinor === 1;
  const raw = req.rawHeaders;
  let hosts = 0;
  let authorizations = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    // The spellings clients send are compared as they are: toLowerCase makes a string per header.
    if (name.length === 4 && (name === 'host' || name === 'Host' || name.toLowerCase() === 'host')) hosts++;
    else if (name.length === 13 && (name === 'authorization' || name === 'Authorization' || name.toLowerCase() === 'authorization')) authorizations++;
  }
  return hosts > 1 || authorizations > 1;
}
