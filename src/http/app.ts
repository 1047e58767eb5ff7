import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TokenError, verifyToken } from '../auth/jwt.ts';
import { tokenRoute } from '../auth/routes.ts';
import { TokenCache } from '../auth/token-cache.ts';
import { createLoginThrottle } from '../auth/throttle.ts';
import { bookRoutes } from '../books/routes.ts';
import { DEFAULTS } from '../config.ts';
import { HttpError, MESSAGES } from '../errors.ts';
import { silentLogger, type Logger } from '../log.ts';
import type { BookStore } from '../store/store.ts';
import { ClientAbortedError } from './body.ts';
import { createCors } from './cors.ts';
import { OPENAPI_ROUTE } from './openapi.ts';
import { writeEnvelope, writeJson } from './respond.ts';
import type { Reply, RequestContext, Route } from './route.ts';
import { Router, type RouteDefinition } from './router.ts';

/** What createApp needs: an open store, the signing secret and the credential pair; the rest is optional. */
export interface AppOptions {
  /** An open store (see `openStore`); `app.close()` closes it. */
  store: BookStore;
  /** HS256 signing secret (spec §5.4). Prefer 32 bytes or more (RFC 7518 §3.2). */
  secret: string | Uint8Array;
  /** The secret being rotated out: it still verifies tokens until they expire, never signs. */
  previousSecret?: string | Uint8Array;
  /** The one credential pair (spec §5.5). */
  username: string;
  password: string;
  /** Failed logins per client address per 15 minutes before 429; 0 disables. Default 20. */
  loginMaxFailures?: number;
  /** Where request and error lines go; default: nowhere. */
  logger?: Logger;
  /** Origins allowed to call from a browser (`*`: any); empty or absent: CORS off. */
  corsOrigins?: readonly string[];
  /** Clock in milliseconds, for tokens and throttling; default `Date.now`. */
  now?: () => number;
}

/** A `(req, res)` handler for any `node:http` or `node:https` server. */
export interface App {
  (req: IncomingMessage, res: ServerResponse): void;
  /** While true, answers carry `Connection: close` so keep-alive clients move on. */
  draining: boolean;
  /** Every route as (pattern, methods): the router's own table. */
  routes(): { pattern: string; methods: string[] }[];
  /** Closes the store once pending writes are durable. */
  close(): Promise<void>;
}

/** While draining, 503 tells a load balancer to send new requests elsewhere. */
function healthRoute(isDraining: () => boolean): RouteDefinition<Route> {
  return {
    method: 'GET',
    pattern: '/healthz',
    handler: {
      auth: false,
      handle: () => {
        if (isDraining()) throw new HttpError(503, MESSAGES.shuttingDown);
        return { status: 200, message: MESSAGES.ok, data: '{"status":"ok"}' };
      },
    },
  };
}

/** A client-supplied request id is echoed only when it is short, visible ASCII (no log injection). */
function requestIdFrom(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  if (typeof given === 'string' && given.length > 0 && given.length <= 128) {
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
function pathOf(url: string): string {
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
function unreadBody(req: IncomingMessage): boolean {
  if (req.complete) return false;
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** `Bearer <token>` (scheme in any case) or the bare token (spec §5.2); '' when absent or blank. */
function tokenFrom(header: string | undefined): string {
  if (header === undefined) return '';
  if (header.length >= 6 && header.slice(0, 6).toLowerCase() === 'bearer' && (header.length === 6 || header.charCodeAt(6) === 32)) {
    return header.slice(6).trim();
  }
  return header.trim();
}

const TOKEN_REQUIRED: Reply = { status: 401, message: MESSAGES.tokenRequired, data: 'null' };
const INVALID_TOKEN: Reply = { status: 401, message: MESSAGES.invalidToken, data: 'null' };

function keyBytes(secret: string | Uint8Array): Uint8Array {
  return typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
}

/**
 * The catalogue as a `(req, res)` handler to mount in your own `node:http` or `node:https` server.
 * It reads no environment, installs no signal handler, never exits the process and logs only to
 * `options.logger`. To stop: set `app.draining`, close your server, then `await app.close()`.
 */
export function createApp(options: AppOptions): App {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const nowSeconds = (): number => Math.floor(now() / 1000);
  const key = keyBytes(options.secret);
  // Current first: signing uses only keys[0]; a previous secret keeps issued tokens valid (rotation).
  const keys = options.previousSecret === undefined ? [key] : [key, keyBytes(options.previousSecret)];
  const { store } = options;
  const router = new Router<Route>([
    tokenRoute({
      username: options.username,
      password: options.password,
      signingKey: key,
      throttle: createLoginThrottle(options.loginMaxFailures ?? DEFAULTS.loginMaxFailures, now),
      nowSeconds,
      logger,
    }),
    ...bookRoutes(store),
    healthRoute(() => app.draining),
    OPENAPI_ROUTE,
  ]);
  const logRequests = logger.isEnabled('info');
  const cors = createCors(options.corsOrigins ?? []);

  const send = (req: IncomingMessage, res: ServerResponse, reqId: string, start: number, reply: Reply): void => {
    let headers = reply.headers;
    if (cors !== undefined) headers = { ...cors.responseHeaders(req.headers.origin), ...headers };
    // Nothing is ever upgraded: after declining, Node's parser may not read the connection again.
    if (app.draining || req.headers.upgrade !== undefined || unreadBody(req)) headers = { ...headers, connection: 'close' };
    if (reply.raw === true) writeJson(res, reqId, reply.status, reply.data, headers);
    else writeEnvelope(res, reqId, reply.status, reply.message, reply.data, headers);
    if (logRequests) {
      logger.info('request', {
        reqId,
        method: req.method,
        path: pathOf(req.url as string),
        statusCode: reply.status,
        responseTime: Math.round((performance.now() - start) * 1000) / 1000,
      });
    }
  };

  const fail = (req: IncomingMessage, res: ServerResponse, reqId: string, start: number, err: unknown): void => {
    if (err instanceof ClientAbortedError) {
      logger.debug('client went away mid-request', { reqId });
      res.destroy();
      return;
    }
    if (res.headersSent) {
      // Too late for an envelope: end the connection so the client sees a failure, not a hang.
      logger.error('failure after the answer had started', { reqId, err: err as Error });
      res.destroy();
      return;
    }
    if (err instanceof HttpError) {
      send(req, res, reqId, start, { status: err.status, message: err.message, data: 'null', ...(err.headers && { headers: err.headers }) });
      return;
    }
    logger.error('unexpected failure while handling a request', { reqId, err: err as Error });
    send(req, res, reqId, start, { status: 500, message: MESSAGES.internalError, data: 'null' });
  };

  const tokens = new TokenCache((token, at) => verifyToken(token, keys, at));
  /** undefined when the request may proceed, otherwise its 401 (a reply, not a throw: this is the hot path). */
  const authorize = (req: IncomingMessage, reqId: string): Reply | undefined => {
    const token = tokenFrom(req.headers.authorization);
    if (token === '') return TOKEN_REQUIRED;
    try {
      tokens.check(token, nowSeconds());
      return undefined;
    } catch (err) {
      if (err instanceof TokenError) {
        logger.debug('token rejected', { reqId, reason: err.reason });
        return INVALID_TOKEN;
      }
      throw err;
    }
  };

  const app = ((req: IncomingMessage, res: ServerResponse): void => {
    const start = performance.now();
    const reqId = requestIdFrom(req);
    try {
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400; answered here, in the envelope.
      if (req.headers.host === undefined && req.httpVersion === '1.1') throw new HttpError(400, MESSAGES.badRequest, { connection: 'close' });
      // decisions.md: route (404, then 405) → auth (401) → {id} (400) → body.
      const match = router.match(req.method as string, pathOf(req.url as string));
      if (match.kind === 'none') throw new HttpError(404, MESSAGES.notFound);
      if (match.kind === 'method') {
        const preflight = cors?.preflightHeaders(req, match.allow);
        if (preflight === undefined) throw new HttpError(405, MESSAGES.methodNotAllowed, { allow: match.allow });
        send(req, res, reqId, start, { status: 200, message: MESSAGES.ok, data: 'null', headers: preflight });
        return;
      }
      const route = match.handler;
      const refused = route.auth ? authorize(req, reqId) : undefined;
      if (refused !== undefined) {
        send(req, res, reqId, start, refused);
        return;
      }
      const ctx: RequestContext = { req, params: match.params, clientAddress: req.socket.remoteAddress ?? '' };
      const result = route.handle(ctx);
      if (result instanceof Promise) {
        result
          .then((reply) => send(req, res, reqId, start, reply))
          .catch((err: unknown) => fail(req, res, reqId, start, err));
      } else {
        send(req, res, reqId, start, result);
      }
    } catch (err) {
      fail(req, res, reqId, start, err);
    }
  }) as App;
  app.draining = false;
  app.routes = () => router.routes();
  app.close = () => store.close();
  return app;
}
