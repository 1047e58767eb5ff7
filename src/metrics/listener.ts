import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHostCheck, type HostCheck } from '../transport/host-names.ts';
import { progressFloor, TRANSPORT_LIMITS, type TransportLimits } from '../transport/limits.ts';
import { ANSWERS } from '../http/messages.ts';
import { createReplyWriter, UNMATCHED_ROUTE } from '../http/reply-writer.ts';
import { malformedRequest, pathOf, requestIdFrom } from '../http/request.ts';
import { encodedReply } from '../http/respond.ts';
import type { RequestContext } from '../http/route.ts';
import { serveApp, type AppServer, type ServedApp } from '../transport/http-server.ts';
import { silentLogger, withFields, type Logger } from '../log.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import { EXPOSITION_CONTENT_TYPE } from './exposition.ts';
import type { Registry } from './registry.ts';

/**
 * The service's transport limits, cut to what scrapers need (SECURITY.md, "Limits"). A scraper
 * sends one small GET every few seconds on a connection it keeps between scrapes (30 s outlasts
 * the 15 s interval of docs/operations.md's scrape configuration), gives up on an answer after 10 s (Prometheus's default
 * `scrape_timeout`, hence the request and send timeouts) and never pipelines: with no token to
 * tell a scraper from anyone else, every request is held to the rule the service's port applies to
 * one without a token, so a request that arrives while an answer is still being written resets
 * its connection. Prometheus holds one connection per target: 4 per address leave room for a
 * second job or a retried scrape, and 4 addresses are needed to fill the 16.
 */
export const METRICS_LIMITS: TransportLimits = {
  ...TRANSPORT_LIMITS,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 30_000,
  sendTimeoutMs: 10_000,
  maxConnections: 16,
  maxPipelinedRequests: 1,
  maxPipelinedWithoutToken: 1,
  maxConnectionsPerAddress: 4,
  // One request on each of its connections.
  maxInFlightPerAddress: 4,
};

const METRICS_PATH = '/metrics';
const EXPOSITION_HEADERS = { 'content-type': EXPOSITION_CONTENT_TYPE } as const;
const NOT_FOUND = encodedReply(ANSWERS.notFound, 'null');
const METHOD_NOT_ALLOWED = encodedReply(ANSWERS.methodNotAllowed, 'null', { allow: 'GET, HEAD' });
const MISDIRECTED = encodedReply(ANSWERS.misdirectedRequest, 'null');
const BAD_REQUEST = encodedReply(ANSWERS.badRequest, 'null', { connection: 'close' });
const NO_PARAMS = Object.freeze({});
const LISTENER_FIELD = { listener: 'metrics' } as const;

/**
 * GET (and HEAD) /metrics with the registry's text; every other answer is the service's envelope,
 * checked in the service's order (docs/contract.md, "Order of checks"): a malformed request 400, a
 * host the listener does not answer for 421, another path 404, another method 405. Scrapes are
 * not counted in the request metrics, which are the service's.
 */
function metricsApp(registry: Registry, hostAllowed: HostCheck | undefined, logger: Logger, limits: TransportLimits): ServedApp {
  const floor = progressFloor(limits);
  const { send, fail, timed } = createReplyWriter({ logger, cors: undefined, isDraining: () => app.draining, answerFault: () => undefined, requests: undefined, floor });
  const app = ((req: IncomingMessage, res: ServerResponse): void => {
    const found = pathOf(req.url as string) === METRICS_PATH;
    const ctx: RequestContext = { req, res, reqId: requestIdFrom(req), start: timed ? performance.now() : 0, params: NO_PARAMS, route: found ? METRICS_PATH : UNMATCHED_ROUTE };
    try {
      if (malformedRequest(req)) return send(ctx, BAD_REQUEST);
      if (hostAllowed !== undefined && !hostAllowed(req)) return send(ctx, MISDIRECTED);
      if (!found) return send(ctx, NOT_FOUND);
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(ctx, METHOD_NOT_ALLOWED);
      send(ctx, { status: 200, body: registry.expose(), headers: EXPOSITION_HEADERS });
    } catch (err) {
      fail(ctx, err);
    }
  }) as ServedApp;
  app.draining = false;
  // It holds nothing of its own: the registry is its owner's to close.
  app.close = () => Promise.resolve();
  return app;
}

export interface MetricsServerOptions {
  /**
   * The host names it answers for, in the form of `AppOptions.allowedHosts`; absent: any. A page
   * that rebinds its name to a loopback listener would otherwise read the metrics.
   */
  allowedHosts?: readonly string[];
  /** Overrides of METRICS_LIMITS (short timeouts in tests). */
  limits?: Partial<TransportLimits>;
  /** Where its request lines and transport warnings go, each with `"listener":"metrics"`; default: nowhere. */
  logger?: Logger;
  /** The budget its answers in flight are charged to (`answers_in_flight`): pass the service's own. */
  memoryBudget?: MemoryBudget;
}

/** The metrics listener: `shutdown()` drains it as the service's own server drains. */
export type MetricsServer = AppServer<ServedApp>;

/**
 * The metrics listener: a plain-HTTP server, separate from the catalogue's port, that serves only
 * `GET /metrics` in the Prometheus text format 0.0.4, on the service's transport (`serveApp`: its
 * timeouts, send timeout, pipelining and per-address bounds, drain) with METRICS_LIMITS. `listen`
 * it where scrapers (and nobody else) can reach it; the CLI binds it to 127.0.0.1 unless
 * METRICS_HOST says otherwise.
 */
export function createMetricsServer(registry: Registry, options: MetricsServerOptions = {}): MetricsServer {
  // First: an invalid entry throws before anything is created.
  const hostAllowed = createHostCheck(options.allowedHosts);
  const logger = options.logger === undefined ? silentLogger : withFields(options.logger, LISTENER_FIELD);
  const limits = { ...METRICS_LIMITS, ...options.limits };
  return serveApp(metricsApp(registry, hostAllowed, logger, limits), {
    limits,
    logger,
    memoryBudget: options.memoryBudget,
  });
}
