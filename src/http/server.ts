import { createServer as createHttpServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { MESSAGES } from '../errors.ts';
import { createApp, type App, type AppOptions } from './app.ts';
import { rawEnvelope } from './respond.ts';

/** decisions.md, "Edge cases": transport limits, enforced about every second. */
export const TRANSPORT_LIMITS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
  maxHeaderBytes: 16 * 1024,
} as const;

/** decisions.md: requests in flight get up to 10 s to finish on shutdown. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** A `node:http` (or `node:https`) server serving the catalogue, with a graceful `shutdown`. */
export interface CatalogueServer extends Server {
  readonly app: App;
  /**
   * Stops accepting connections, lets requests in flight finish (up to `graceMs`), then closes
   * the remaining connections and the store. Resolves when everything is closed.
   */
  shutdown(graceMs?: number): Promise<void>;
}

/**
 * Requests Node's parser refuses never reach the app; they still get an envelope when the socket
 * can be written (decisions.md, "Edge cases"), then the connection closes.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const answer =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? rawEnvelope(431, 'Request Header Fields Too Large', MESSAGES.headersTooLarge)
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? rawEnvelope(408, 'Request Timeout', MESSAGES.requestTimeout)
        : rawEnvelope(400, 'Bad Request', MESSAGES.badRequest);
  socket.end(answer);
  socket.destroySoon();
}

/** An `http.Server` serving the catalogue, ready to `listen`. */
export function createServer(options: AppOptions): CatalogueServer {
  const app = createApp(options);
  const server = createHttpServer(
    {
      headersTimeout: TRANSPORT_LIMITS.headersTimeoutMs,
      requestTimeout: TRANSPORT_LIMITS.requestTimeoutMs,
      connectionsCheckingInterval: TRANSPORT_LIMITS.connectionsCheckingIntervalMs,
      maxHeaderSize: TRANSPORT_LIMITS.maxHeaderBytes,
    },
    app,
  );
  server.keepAliveTimeout = TRANSPORT_LIMITS.keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  let closing: Promise<void> | undefined;
  return Object.assign(server, {
    app,
    shutdown(graceMs: number = SHUTDOWN_GRACE_MS): Promise<void> {
      closing ??= drain(server, app, graceMs);
      return closing;
    },
  });
}

async function drain(server: Server, app: App, graceMs: number): Promise<void> {
  app.draining = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearTimeout(deadline);
  }
  await app.close();
}

/** Listens and resolves with the bound address, or rejects with the listen error. */
export function listen(server: Server, port: number, host?: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}
