import type { ProgressFloor } from '../http/piecewise-body.ts';

/**
 * docs/contract.md, "Transport": transport limits, enforced about every second. The connection cap
 * sits well above what idle clients can pin: a connection that sends nothing is closed after
 * `headersTimeoutMs`, an idle keep-alive one after `keepAliveTimeoutMs`, one whose answer makes no
 * progress (a client that stopped reading) after `sendTimeoutMs`, and one with more than
 * `maxPipelinedRequests` requests waiting for their answers at once (SECURITY.md). A request
 * without a valid token may not be pipelined behind another (`maxPipelinedWithoutToken`), and
 * one client address may hold at most `maxConnectionsPerAddress` connections and
 * `maxInFlightPerAddress` requests waiting for their answers across them (0: no per-address
 * limit, for a service behind a reverse proxy, where every client shares the proxy's address).
 *
 * `minStreamBytesPerSecond` is the progress floor of a streamed answer (GET /books in full): one
 * that falls more than `sendTimeoutMs` behind that rate is cut, so a reader that takes a little
 * now and then cannot hold its connection, and the committed state it reads, for as long as it
 * likes. 64 KiB/s (512 kbit/s) reads the 85.3 MB list of 1M books (`npm run bench:compression`) in 22 minutes; a client slower than
 * that pages with `limit`/`after`, whose answers are small (SECURITY.md, "Limits").
 */
export const TRANSPORT_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 1024,
  sendTimeoutMs: 30_000,
  maxPipelinedRequests: 16,
  maxPipelinedWithoutToken: 1,
  maxConnectionsPerAddress: 64,
  maxInFlightPerAddress: 256,
  minStreamBytesPerSecond: 64 * 1024,
} as const;

/** The progress floor of a streamed answer under these limits: the rate, with the send timeout's lag (SECURITY.md, "Limits"). */
export function progressFloor(limits: TransportLimits): ProgressFloor {
  return { minBytesPerSecond: limits.minStreamBytesPerSecond, graceMs: limits.sendTimeoutMs };
}

/** TRANSPORT_LIMITS with every value overridable (ServerOptions.limits). */
export type TransportLimits = { readonly [K in keyof typeof TRANSPORT_LIMITS]: number };
