import { createServer as createHttpServer, ServerResponse, type IncomingMessage, type Server, type ServerOptions as HttpServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { silentLogger, type Logger } from '../log.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import { answerBeingSent } from './answer-bytes.ts';
import { chargedResponses } from './charged-response.ts';
import { ConnectionGuard } from './connection-guard.ts';
import { watchConnections, type ConnectionEvents } from './connection-events.ts';
import { deferContinue } from '../http/continue.ts';
import { TRANSPORT_LIMITS, type TransportLimits } from './limits.ts';
import { ANSWERS } from '../http/messages.ts';
import { rawEnvelope } from '../http/respond.ts';
import { newRequestId } from '../http/request.ts';

/** What a server serves: a `(req, res)` handler that can be told to drain, and closed. */
export interface ServedApp {
  (req: IncomingMessage, res: ServerResponse): void;
  /** While true, answers carry `Connection: close` so keep-alive clients move on. */
  draining: boolean;
  /** Closes what the app holds (the store) once pending work is done. */
  close(): Promise<void>;
}

/** The transport around an app: TLS, the limits, and who hears of connections. */
export interface TransportOptions {
  /** PEM certificate chain and private key: serve HTTPS with the same handler and limits. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Overrides of TRANSPORT_LIMITS: the CLI's MAX_CONNECTIONS, or short timeouts in tests. */
  limits?: Partial<TransportLimits>;
  /** Where refused connections are reported; default: nowhere. */
  logger?: Logger;
  /** Clock in milliseconds, for rate-limiting those reports; default `Date.now`. */
  now?: () => number;
  /** Connection events, for metrics. */
  connectionEvents?: ConnectionEvents | undefined;
  /** Where connections report the answer bytes their sockets have not taken (`answers_in_flight`); default: nowhere. */
  memoryBudget?: MemoryBudget | undefined;
  /**
   * Whether a request carries a valid token: a request without one may not be pipelined
   * (TRANSPORT_LIMITS.maxPipelinedWithoutToken). Default: every request may be, up to maxPipelinedRequests.
   */
  hasValidToken?: ((req: IncomingMessage) => boolean) | undefined;
}

/** docs/contract.md, "Shutdown": requests in flight get up to 10 s to finish on shutdown. */
export const SHUTDOWN_GRACE_MS = 10_000;

export interface DrainResult {
  /** Requests still in flight when the grace period ended, whose connections were closed under them. */
  abandoned: number;
}

/** A `node:http` (or `node:https`) server serving an app, with a graceful `shutdown`. */
export interface AppServer<A extends ServedApp> extends Server {
  readonly app: A;
  /**
   * Stops accepting connections, lets requests in flight finish (up to `graceMs`), then closes
   * the remaining connections and the store. Resolves when everything is closed, with how many
   * connections still had a request in flight at `graceMs` and were cut off.
   */
  shutdown(graceMs?: number): Promise<DrainResult>;
}

/**
 * Mozilla's "intermediate" server profile, stated rather than left to Node's default list (which
 * still offers suites without forward secrecy and CBC with SHA-1, such as AES128-SHA): TLS 1.2 or
 * newer, and for TLS 1.2 only ECDHE key exchange with AEAD ciphers. TLS 1.3's suites are all AEAD
 * with forward secrecy.
 */
export const TLS_PROFILE = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
} as const;

/** HTTP-level failures (parser errors, the request timeout), as opposed to TLS or socket ones. */
function isHttpError(code: string | undefined): boolean {
  return code !== undefined && (code.startsWith('HPE_') || code === 'ERR_HTTP_REQUEST_TIMEOUT');
}

/**
 * Requests Node's parser refuses never reach the app; they still get an envelope when the socket
 * can be written (docs/contract.md, "Transport"), then the connection closes. node:https routes TLS
 * failures (a handshake that times out or is garbage) here too: there is no channel to answer
 * on, and a write would wait forever for a handshake that never completes, so those are dropped.
 */
function answerClientError(guard: ConnectionGuard): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    // A later pipelined request failed to parse while the answer to an earlier, complete one is
    // still on its way: writing now would replace that answer (a client would retry a write that
    // succeeded). Node's own handler checks the same field. Let it finish, then close. So too when
    // the fault is in the body of the request being answered (a 401 sent at its headers, still on
    // its way): that request has its one answer.
    const inFlight = answerBeingSent(socket);
    if (inFlight !== null && (inFlight.req.complete || inFlight.headersSent) && isHttpError(err.code) && socket.writable) {
      inFlight.shouldKeepAlive = false;
      inFlight.once('finish', () => socket.destroySoon());
      return;
    }
    guard.takeOver(socket);
    if (!isHttpError(err.code) || !socket.writable) {
      socket.destroy();
      return;
    }
    // As above, the answer sent already.
    if (guard.answeredBeforeItsBody(socket)) {
      socket.destroySoon();
      return;
    }
    const requestId = newRequestId();
    const answer =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? rawEnvelope(ANSWERS.headersTooLarge, 'Request Header Fields Too Large', requestId)
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? rawEnvelope(ANSWERS.requestTimeout, 'Request Timeout', requestId)
          : rawEnvelope(ANSWERS.badRequest, 'Bad Request', requestId);
    socket.end(answer);
    socket.destroySoon();
  };
}

/**
 * Node hands CONNECT to a 'connect' listener or silently drops the socket. Nothing is tunnelled
 * here, so the app answers it like any other method (404 or 405 in the envelope), then it closes.
 * Node has taken its error listener and timeouts off the socket: the guard gives it its own. A
 * CONNECT pipelined behind answers still open is answered after them (the socket is theirs until
 * then); after one that closed the connection, or a reset, it is not run.
 */
function answerConnect(app: ServedApp, guard: ConnectionGuard): (req: IncomingMessage, socket: Duplex) => void {
  return (req, duplex) => {
    const socket = duplex as Socket;
    guard.takeOver(socket);
    guard.afterAnswers(socket, () => {
      // After an answer that closed the connection, or a reset, there is none to answer on.
      if (socket.destroyed || socket.writableEnded) return void socket.destroy();
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket);
      res.on('finish', () => socket.destroySoon());
      app(req, res);
    });
  };
}

/** An `http.Server` (or `https.Server` when `tls` is given) serving `app`, ready to `listen`. */
export function serveApp<A extends ServedApp>(app: A, options: TransportOptions = {}): AppServer<A> {
  const { tls, limits: overrides } = options;
  const limits: TransportLimits = { ...TRANSPORT_LIMITS, ...overrides };
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? Date.now;
  const guard = new ConnectionGuard(
    {
      sendTimeoutMs: limits.sendTimeoutMs,
      maxPipelinedRequests: limits.maxPipelinedRequests,
      maxPipelinedWithoutToken: limits.maxPipelinedWithoutToken,
      maxConnectionsPerAddress: limits.maxConnectionsPerAddress,
      maxInFlightPerAddress: limits.maxInFlightPerAddress,
      lingerMs: limits.keepAliveTimeoutMs,
      checkIntervalMs: limits.connectionsCheckingIntervalMs,
    },
    { logger, now, budget: options.memoryBudget, hasValidToken: options.hasValidToken, onRefused: (reason) => options.connectionEvents?.rejected(reason) },
  );
  const handler = guard.handler(app);
  const http: HttpServerOptions = {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    connectionsCheckingInterval: limits.connectionsCheckingIntervalMs,
    maxHeaderSize: limits.maxHeaderBytes,
    // Node's own answer to a missing Host is an empty 400; the app sends the envelope instead.
    requireHostHeader: false,
    // Answers report what they hold as they write it (the memory budget's `answers_in_flight`).
    ...(options.memoryBudget !== undefined && { ServerResponse: chargedResponses(guard.written) }),
  };
  // A TLS handshake is part of getting the headers in; Node's own default would allow 120 s.
  const server =
    tls === undefined ? createHttpServer(http, handler) : createHttpsServer({ ...http, ...tls, ...TLS_PROFILE, handshakeTimeout: limits.headersTimeoutMs }, handler);
  server.on('connection', guard.watch);
  server.on('close', () => guard.stop());
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
  // A client that half-closes after its request still gets its answer, then the connection closes
  // (docs/contract.md, "Transport"). Node's default drops the answer of a request still being
  // handled, though a write it asked for may commit: the client would retry a change that happened.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Over TLS the TLS socket must stay writable too, but only once its handshake is done: a
  // connection that ends before (a port scan, a balancer's TCP check) closes at once, not at the
  // handshake timeout.
  if (tls !== undefined) server.on('secureConnection', (socket: Socket) => void (socket.allowHalfOpen = true));
  watchConnections(server, { logger, now, maxConnections: limits.maxConnections, events: options.connectionEvents });
  server.on('clientError', answerClientError(guard));
  // RFC 9110 §10.1.1: a server MAY ignore an expectation other than 100-continue; Node's default
  // is a bare 417 without the envelope, so the request is served as if it had none.
  server.on('checkExpectation', handler);
  // 100-continue: Node would answer 100 at once; the app sends it only when it reads the body.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    deferContinue(req, res);
    handler(req, res);
  });
  server.on('connect', answerConnect(app, guard));
  let closing: Promise<DrainResult> | undefined;
  return Object.assign(server, {
    app,
    shutdown(graceMs: number = SHUTDOWN_GRACE_MS): Promise<DrainResult> {
      closing ??= drain(server, app, guard, graceMs);
      return closing;
    },
  });
}

async function drain(server: Server, app: ServedApp, guard: ConnectionGuard, graceMs: number): Promise<DrainResult> {
  app.draining = true;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  guard.closeTakenOver();
  let abandoned = 0;
  // Idle connections were closed above and every answer since carried Connection: close, so a
  // connection still open at the deadline is one whose request has not been answered.
  const deadline = setTimeout(() => {
    server.getConnections((err, count) => {
      abandoned = err === null ? count : 0;
      server.closeAllConnections();
      // closeAllConnections knows only the sockets the HTTP layer still owns.
      guard.closeAll();
    });
  }, graceMs);
  try {
    await closed;
  } finally {
    clearTimeout(deadline);
  }
  await app.close();
  return { abandoned };
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
