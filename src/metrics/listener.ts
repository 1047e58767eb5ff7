import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHostCheck, type HostCheck } from '../http/host-names.ts';
import { EXPOSITION_CONTENT_TYPE } from './exposition.ts';
import type { Registry } from './registry.ts';

/**
 * A scraper sends one small GET every few seconds: short timeouts and a few connections are
 * plenty, so a stuck or hostile client cannot hold this listener either.
 */
const METRICS_LIMITS = { headersTimeoutMs: 5_000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 30_000, maxConnections: 16 } as const;

function plain(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(`${text}\n`);
}

/**
 * GET (and HEAD) /metrics with the registry's text; every other path 404, other methods 405; a host
 * the listener does not answer for 421 first, as on the service's port (docs/contract.md, "Host names").
 */
function serveMetrics(registry: Registry, hostAllowed: HostCheck | undefined): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (hostAllowed !== undefined && !hostAllowed(req)) return plain(res, 421, 'Misdirected request');
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path !== '/metrics') return plain(res, 404, 'Not found');
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'Method not allowed', { allow: 'GET, HEAD' });
    const body = registry.expose();
    res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

export interface MetricsServerOptions {
  /**
   * The host names it answers for, in the form of `AppOptions.allowedHosts`; absent: any. A page
   * that rebinds its name to a loopback listener would otherwise read the metrics.
   */
  allowedHosts?: readonly string[];
}

/**
 * The metrics listener: a plain-HTTP server, separate from the catalogue's port, that serves only
 * `GET /metrics` in the Prometheus text format 0.0.4. `listen` it where scrapers (and nobody
 * else) can reach it; the CLI binds it to 127.0.0.1 unless METRICS_HOST says otherwise.
 */
export function createMetricsServer(registry: Registry, options: MetricsServerOptions = {}): Server {
  const server = createServer(
    { headersTimeout: METRICS_LIMITS.headersTimeoutMs, requestTimeout: METRICS_LIMITS.requestTimeoutMs },
    serveMetrics(registry, createHostCheck(options.allowedHosts)),
  );
  server.keepAliveTimeout = METRICS_LIMITS.keepAliveTimeoutMs;
  server.maxConnections = METRICS_LIMITS.maxConnections;
  return server;
}
