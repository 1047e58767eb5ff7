import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAuthorizer } from '../auth/authorize.ts';
import { tokenRoute } from '../auth/routes.ts';
import { SERVICE_WIDE_FACTOR, withServiceWideBound } from '../auth/service-wide-throttle.ts';
import { createLoginThrottle, DEFAULT_LOGIN_MAX_FAILURES } from '../auth/throttle.ts';
import { bookRoutes } from '../books/routes.ts';
import { ConfigError, HttpError, MESSAGES } from '../errors.ts';
import { changesRoute } from '../events/changes-route.ts';
import { silentLogger, type Logger } from '../log.ts';
import type { CatalogueMetrics } from '../metrics/catalogue-metrics.ts';
import type { BookStore } from '../store/store.ts';
import { createCors } from './cors.ts';
import { DEFAULT_SERVER_URL, openApiRoute } from './openapi.ts';
import { readinessRoute } from './readiness.ts';
import { createReplyWriter, UNMATCHED_ROUTE } from './reply-writer.ts';
import { encodedReply } from './respond.ts';
import { pathOf, requestIdFrom } from './request.ts';
import type { Reply, RequestContext, Route } from './route.ts';
import { Router, type RouteDefinition } from './router.ts';

/** What createApp needs: an open store, the signing secret and the credential pair; the rest is optional. */
export interface AppOptions {
  /** An open store (see `openStore`); `app.close()` closes it. */
  store: BookStore;
  /** HS256 signing secret (docs/contract.md, "Signing key": a string is used as its UTF-8 bytes). Prefer 32 bytes or more (RFC 7518 §3.2). */
  secret: string | Uint8Array;
  /** The secret being rotated out: it still verifies tokens until they expire, never signs. */
  previousSecret?: string | Uint8Array;
  /** The one credential pair (docs/contract.md, "Logins"). */
  username: string;
  password: string;
  /**
   * Failed logins per client address per 15 minutes before 429; ten times as many from all
   * addresses together stop every login for the rest of that window. 0 disables both. Default 20.
   */
  loginMaxFailures?: number;
  /** Where request and error lines go; default: nowhere. */
  logger?: Logger;
  /** Origins allowed to call from a browser (`*`: any); empty or absent: CORS off. */
  corsOrigins?: readonly string[];
  /** Clock in milliseconds, for tokens and throttling; default `Date.now`. */
  now?: () => number;
  /**
   * Where the embedding server mounts the app (`/catalogue`, or an absolute `https://…` URL): the
   * OpenAPI document's `servers` URL, so "Try it out" calls the catalogue and not the host. Default:
   * `.`, relative to the document's own URL, right wherever /openapi.json is served beside the routes.
   */
  mountPath?: string;
  /** Where requests, logins, token refusals and connections are counted (see `createMetrics`); default: nowhere. */
  metrics?: CatalogueMetrics;
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

const NOT_FOUND = encodedReply(404, MESSAGES.notFound, 'null');

function methodNotAllowed(allow: string): Reply {
  return { status: 405, message: MESSAGES.methodNotAllowed, data: 'null', headers: { allow } };
}

function serverUrl(mountPath: string | undefined): string {
  if (mountPath === undefined) return DEFAULT_SERVER_URL;
  if (/^(\/|https?:\/\/)[^\s]*$/.test(mountPath)) return mountPath;
  throw new ConfigError(`invalid mountPath ${JSON.stringify(mountPath)}: expected a path such as /catalogue or an absolute http(s) URL`);
}

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
  const maxFailures = options.loginMaxFailures ?? DEFAULT_LOGIN_MAX_FAILURES;
  const router = new Router<Route>([
    tokenRoute({
      username: options.username,
      password: options.password,
      signingKey: key,
      throttle: withServiceWideBound(createLoginThrottle(maxFailures, now), maxFailures * SERVICE_WIDE_FACTOR, now),
      nowSeconds,
      logger,
      onLoginFailed: options.metrics?.auth.loginFailed,
      onThrottled: options.metrics?.auth.loginThrottled,
    }),
    ...bookRoutes(store),
    changesRoute(store.feed),
    healthRoute(() => app.draining),
    readinessRoute(() => app.draining, store),
    openApiRoute(serverUrl(options.mountPath)),
  ]);
  const authorize = createAuthorizer({ keys, nowSeconds, logger, onRejected: options.metrics?.auth.tokenRejected });
  const cors = createCors(options.corsOrigins ?? []);
  const { send, fail } = createReplyWriter({ logger, cors, isDraining: () => app.draining, requests: options.metrics?.requests });

  const app = ((req: IncomingMessage, res: ServerResponse): void => {
    const start = performance.now();
    const reqId = requestIdFrom(req);
    let pattern = UNMATCHED_ROUTE;
    try {
      // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400; answered here, in the envelope.
      if (req.headers.host === undefined && req.httpVersion === '1.1') throw new HttpError(400, MESSAGES.badRequest, { connection: 'close' });
      // docs/contract.md, "Order of checks": route (404, then 405) → auth (401) → {id} (400) → body.
      // 404 and 405 are what a scan of paths and methods gets: answered as replies, since an Error
      // (a captured stack) costs ~3 µs, like the 401s.
      const match = router.match(req.method as string, pathOf(req.url as string));
      if (match.kind === 'none') {
        send(req, res, reqId, start, NOT_FOUND, pattern);
        return;
      }
      pattern = match.pattern;
      if (match.kind === 'method') {
        const preflight = cors?.preflightHeaders(req, match.allow);
        send(req, res, reqId, start, preflight === undefined ? methodNotAllowed(match.allow) : { status: 200, message: MESSAGES.ok, data: 'null', headers: preflight }, pattern);
        return;
      }
      const route = match.handler;
      const refused = route.auth ? authorize(req, reqId) : undefined;
      if (refused !== undefined) {
        send(req, res, reqId, start, refused, pattern);
        return;
      }
      const ctx: RequestContext = { req, params: match.params, clientAddress: req.socket.remoteAddress ?? '' };
      const result = route.handle(ctx);
      if (result instanceof Promise) {
        result
          .then((reply) => send(req, res, reqId, start, reply, match.pattern))
          .catch((err: unknown) => fail(req, res, reqId, start, err, match.pattern));
      } else {
        send(req, res, reqId, start, result, pattern);
      }
    } catch (err) {
      fail(req, res, reqId, start, err, pattern);
    }
  }) as App;
  app.draining = false;
  app.routes = () => router.routes();
  app.close = () => store.close();
  return app;
}
