import type { IncomingMessage, ServerResponse } from 'node:http';
import { createAuthorizer, tokenExpiry, type Authorizer } from '../auth/authorize.ts';
import { ticketKeys } from '../auth/event-ticket.ts';
import { signingKeys } from '../auth/keys.ts';
import { DEFAULT_LOGIN_MAX_FAILURES } from '../auth/throttle.ts';
import { ERROR_CODES, isFault } from '../faults.ts';
import { createCors, type Cors } from '../http/cors.ts';
import { createHostCheck, type HostCheck } from '../transport/host-names.ts';
import { progressFloor, TRANSPORT_LIMITS, type TransportLimits } from '../transport/limits.ts';
import { ANSWERS, refusal } from '../http/messages.ts';
import { createReplyWriter, UNMATCHED_ROUTE, type ReplyWriter } from '../http/reply-writer.ts';
import { malformedRequest, pathOf, requestIdFrom } from '../http/request.ts';
import { encodedReply, envelopeReply } from '../http/respond.ts';
import type { Handler, Reply, RequestContext } from '../http/route.ts';
import { Router } from '../http/router.ts';
import { silentLogger, type Logger } from '../log.ts';
import { defaultMemoryBudgetBytes, MemoryBudget } from '../memory/budget.ts';
import { EVENT_STREAM_DEFAULTS, StreamRegistry, type EventStreamOptions } from '../events/stream-registry.ts';
import type { CatalogueMetrics } from '../metrics/catalogue-metrics.ts';
import { InvalidBookError } from '../model/valid-book.ts';
import type { BookStore } from '../store/book-store.ts';
import { loadUiAssets } from '../ui/assets.ts';
import { uiRoutes } from '../ui/routes.ts';
import { documentMountedAt } from './openapi-document.ts';
import { ROUTE_TABLE, type ServiceDeps } from './route-table.ts';

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
  /** Failed logins per client address per 15 minutes before 429; 0 disables. Default 20. */
  loginMaxFailures?: number;
  /** Where request and error lines go; default: nowhere. */
  logger?: Logger;
  /** Origins allowed to call from a browser (`*`: any); empty or absent: CORS off. */
  corsOrigins?: readonly string[];
  /**
   * The host names the app answers for (docs/contract.md, "Host names"): `books.example.com`,
   * `.example.com` (the domain and its subdomains), an address, or `*`. Any other Host is 421
   * `Misdirected request`, so a page that rebinds its own name to this server's address gets
   * nothing. Absent: any host (the server it is mounted in decides); LOOPBACK_HOST_NAMES suits one
   * that listens on loopback only.
   */
  allowedHosts?: readonly string[];
  /** Clock in milliseconds, for tokens and throttling; default `Date.now`. */
  now?: () => number;
  /**
   * Where the embedding server mounts the app (`/catalogue`, or an absolute `https://…` URL): the
   * OpenAPI document's `servers` URL, so "Try it out" calls the catalogue and not the host. Default:
   * `.`, relative to the document's own URL, right wherever /openapi.json is served beside the routes.
   * The `Link` headers of GET /books pages and GET /changes start with it too (RFC 8288 resolves them
   * against the request's URL, so `</books?…>` would lead out of the mount).
   */
  mountPath?: string;
  /** Limits of GET /events: open streams, heartbeat interval, a non-reading client's bound, the `retry:` sent. */
  eventStreams?: Partial<EventStreamOptions>;
  /** Where requests, logins, token refusals and connections are counted (see `createMetrics`); default: nowhere. */
  metrics?: CatalogueMetrics;
  /** Serve the built-in page at `GET /` (and its assets under `/ui/`); default false. */
  ui?: boolean;
  /**
   * The one budget for what clients make the process hold (SECURITY.md, "Memory budget"); pass the
   * same one to `openStore`. Default: a budget of its own of `defaultMemoryBudgetBytes()`.
   */
  memoryBudget?: MemoryBudget;
  /**
   * Overrides of TRANSPORT_LIMITS. The app enforces one of them itself, wherever it is mounted: the
   * progress floor of a streamed answer (`minStreamBytesPerSecond`, with `sendTimeoutMs` as the lag
   * allowed; docs/contract.md, "Transport"). createServer hands the same limits to its transport.
   */
  limits?: Partial<TransportLimits>;
}

/** A `(req, res)` handler for any `node:http` or `node:https` server. */
export interface App {
  (req: IncomingMessage, res: ServerResponse): void;
  /**
   * While true, answers carry `Connection: close` so keep-alive clients move on; setting it ends
   * every open event stream at once, so none holds the drain (clients resume with Last-Event-ID).
   */
  draining: boolean;
  /** Whether a request carries a token that verifies now (the transport lets only those be pipelined). */
  hasValidToken(req: IncomingMessage): boolean;
  /** Event streams open now (a cheap count, for the metrics' gauge). */
  readonly eventStreams: number;
  /** What its clients hold, and the limit (AppOptions.memoryBudget). */
  readonly memoryBudget: MemoryBudget;
  /** Every route as (pattern, methods): the router's own table. */
  routes(): { pattern: string; methods: string[] }[];
  /** Ends the event streams and closes the store once pending writes are durable. */
  close(): Promise<void>;
}

/** A route of the table with its handler built for this app. */
interface BoundRoute {
  readonly method: (typeof ROUTE_TABLE)[number]['method'];
  readonly pattern: string;
  readonly auth: boolean;
  /** The route takes an event ticket in place of a missing token (Route.ticket). */
  readonly ticket: boolean;
  readonly handle: Handler;
}

const NOT_FOUND = encodedReply(ANSWERS.notFound, 'null');
const MISDIRECTED = encodedReply(ANSWERS.misdirectedRequest, 'null');
const BOOK_REFUSED = envelopeReply(ANSWERS.invalidInput, 'null');
const PRECONDITION_FAILED = envelopeReply(ANSWERS.preconditionFailed, 'null');
const IDS_EXHAUSTED = envelopeReply(ANSWERS.bookIdsExhausted, 'null');

/** The library faults a request can meet, as answers: the one place they are mapped. */
function answerFault(err: unknown): Reply | undefined {
  if (err instanceof InvalidBookError) return BOOK_REFUSED;
  if (isFault(err, ERROR_CODES.preconditionFailed)) return PRECONDITION_FAILED;
  if (isFault(err, ERROR_CODES.bookIdsExhausted)) return IDS_EXHAUSTED;
  return undefined;
}

function methodNotAllowed(allow: string): Reply {
  return envelopeReply(ANSWERS.methodNotAllowed, 'null', { allow });
}

/**
 * With CORS on, OPTIONS is answered on every path (docs/contract.md, "Cross-origin requests"):
 * 200 with `Allow`, and the preflight headers when it is a preflight from an allowed origin.
 */
function optionsAnswer(cors: Cors, req: IncomingMessage, allow: string): Reply {
  return envelopeReply(ANSWERS.ok, 'null', Object.assign({ allow }, cors.preflightHeaders(req, allow)));
}

const NO_PARAMS = Object.freeze({});

/**
 * The catalogue as a `(req, res)` handler to mount in your own `node:http` or `node:https` server.
 * It reads no environment, installs no signal handler, never exits the process and logs only to
 * `options.logger`. To stop: set `app.draining`, close your server, then `await app.close()`.
 */
export function createApp(options: AppOptions): App {
  // First: an invalid entry throws before anything is subscribed or watched.
  const hostAllowed = createHostCheck(options.allowedHosts);
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const memoryBudget = options.memoryBudget ?? new MemoryBudget(defaultMemoryBudgetBytes());
  options.metrics?.watchMemoryBudget(memoryBudget);
  const eventStreams = new StreamRegistry(options.store.feed, { ...EVENT_STREAM_DEFAULTS, ...options.eventStreams }, logger, now, memoryBudget);
  options.metrics?.watchEventStreams(() => eventStreams.size);
  const drain = { on: false };
  const isDraining = (): boolean => drain.on;
  const keys = signingKeys(options.secret, options.previousSecret);
  const tickets = ticketKeys(keys);
  const deps = serviceDeps(options, { logger, now, keys, tickets, eventStreams, memoryBudget, isDraining });
  const cors = createCors(options.corsOrigins ?? []);
  const router = boundRouter(options, deps, cors);
  const nowSeconds = (): number => Math.floor(now() / 1000);
  const authorize = createAuthorizer({ keys, tickets, nowSeconds, logger, onRejected: options.metrics?.auth.tokenRejected });
  const floor = progressFloor({ ...TRANSPORT_LIMITS, ...options.limits });
  const writer = createReplyWriter({ logger, cors, isDraining, answerFault, requests: options.metrics?.requests, floor });
  const handle = requestHandler({ hostAllowed, router, cors, authorize, writer });
  return asApp(handle, { drain, eventStreams, memoryBudget, authorize, router, store: options.store });
}

/** What the routes' handlers are built with, beside what createApp made for itself. */
function serviceDeps(
  options: AppOptions,
  made: Pick<ServiceDeps, 'logger' | 'now' | 'keys' | 'tickets' | 'eventStreams' | 'memoryBudget' | 'isDraining'>,
): ServiceDeps {
  return {
    ...made,
    tokenExpiry,
    store: options.store,
    username: options.username,
    password: options.password,
    loginMaxFailures: options.loginMaxFailures ?? DEFAULT_LOGIN_MAX_FAILURES,
    onLoginFailed: options.metrics?.auth.loginFailed,
    onThrottled: options.metrics?.auth.loginThrottled,
    openApiDocument: documentMountedAt(options.mountPath),
    linkBase: options.mountPath?.replace(/\/+$/, '') ?? '',
  };
}

/** The route table with each handler built for this app; OPTIONS is answered on every path only with CORS on. */
function boundRouter(options: AppOptions, deps: ServiceDeps, cors: Cors | undefined): Router<BoundRoute> {
  // The page's routes come after the API's: they add nothing to the cost of matching the others.
  const table = options.ui === true ? [...ROUTE_TABLE, ...uiRoutes(loadUiAssets())] : ROUTE_TABLE;
  return new Router<BoundRoute>(
    table.map((r) => ({ method: r.method, pattern: r.pattern, auth: r.auth, ticket: r.ticket === true, handle: r.handler(deps) })),
    cors === undefined ? [] : ['OPTIONS'],
  );
}

interface RequestHandlerParts {
  readonly hostAllowed: HostCheck | undefined;
  readonly router: Router<BoundRoute>;
  readonly cors: Cors | undefined;
  readonly authorize: Authorizer;
  readonly writer: ReplyWriter;
}

/** One request, checked in the contract's order, answered through the reply writer. */
function requestHandler({ hostAllowed, router, cors, authorize, writer }: RequestHandlerParts): (req: IncomingMessage, res: ServerResponse) => void {
  const { send, fail, timed } = writer;
  // RFC 9110 §9.3.7: `OPTIONS *` asks about the server as a whole (docs/contract.md, "Paths and ids").
  const serverOptions = envelopeReply(ANSWERS.ok, 'null', { allow: router.allowAnywhere('OPTIONS') });
  return (req, res) => {
    const match = router.match(req.method as string, pathOf(req.url as string));
    const ctx: RequestContext = {
      req,
      res,
      reqId: requestIdFrom(req),
      start: timed ? performance.now() : 0,
      params: match.kind === 'found' ? match.params : NO_PARAMS,
      route: match.kind === 'none' ? UNMATCHED_ROUTE : match.pattern,
    };
    try {
      // RFC 9112 §3.2: an HTTP/1.1 request without Host, or with two, is a 400; answered here, in the envelope.
      if (malformedRequest(req)) throw refusal('badRequest', { connection: 'close' });
      // docs/contract.md, "Order of checks": host (421) → route (404, then 405) → auth (401) → {id} (400) → body. 421,
      // 404, 405 and 401 are what a scan gets: answered as replies, not thrown (docs/performance.md, "Design choices and their measured effect").
      if (hostAllowed !== undefined && !hostAllowed(req)) return send(ctx, MISDIRECTED);
      if (match.kind === 'none') return send(ctx, req.url === '*' && req.method === 'OPTIONS' ? serverOptions : NOT_FOUND);
      if (match.kind === 'method') {
        return send(ctx, cors !== undefined && req.method === 'OPTIONS' ? optionsAnswer(cors, req, match.allow) : methodNotAllowed(match.allow));
      }
      const route = match.route;
      const refused = route.auth ? authorize(ctx, route.ticket) : undefined;
      if (refused !== undefined) return send(ctx, refused);
      const result = route.handle(ctx);
      if (result instanceof Promise) result.then((reply) => send(ctx, reply)).catch((err: unknown) => fail(ctx, err));
      else send(ctx, result);
    } catch (err) {
      fail(ctx, err);
    }
  };
}

interface AppState {
  /** Whether the app drains (App.draining); shared with the handlers that ask. */
  readonly drain: { on: boolean };
  readonly eventStreams: StreamRegistry;
  readonly memoryBudget: MemoryBudget;
  readonly authorize: Authorizer;
  readonly router: Router<BoundRoute>;
  readonly store: BookStore;
}

/** The handler with what an App also offers: draining, its streams and budget, its routes, close. */
function asApp(handle: (req: IncomingMessage, res: ServerResponse) => void, { drain, eventStreams, memoryBudget, authorize, router, store }: AppState): App {
  const app = handle as App;
  Object.defineProperties(app, {
    draining: {
      get: () => drain.on,
      set: (value: boolean) => {
        drain.on = value;
        if (value) eventStreams.closeAll();
      },
    },
    eventStreams: { get: () => eventStreams.size },
    memoryBudget: { value: memoryBudget },
  });
  app.hasValidToken = authorize.hasValidToken;
  app.routes = () => router.routes();
  app.close = () => {
    eventStreams.closeAll();
    return store.close();
  };
  return app;
}
