import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.ts';

/** What one connection is watched for; the limits come from TRANSPORT_LIMITS. */
export interface ConnectionGuardLimits {
  /** An answer with bytes waiting that the kernel has not taken for this long: the connection is destroyed. */
  sendTimeoutMs: number;
  /** More requests than this waiting for their answers on one connection: it is destroyed. */
  maxPipelinedRequests: number;
  /** How long a socket taken over from the HTTP layer may stay open after it is taken over. */
  lingerMs: number;
  /** How often the timeouts above are checked. */
  checkIntervalMs: number;
}

interface Watched {
  /** Bytes waiting for the kernel to take them, at the last check. */
  queued: number;
  /** When `queued` last moved, or when bytes started waiting; undefined while nothing waits. */
  stalledSince: number | undefined;
  /** When a CONNECT or a request Node's parser refused took the socket from the HTTP layer. */
  takenOverAt: number | undefined;
}

/**
 * Bytes written to the socket that the kernel has not taken yet. libuv's queue shrinks byte by
 * byte as the peer's window opens, while `writableLength` moves only when a whole write is done
 * (one 9 MB answer is one write). Over TLS, the TCP socket under the TLS one is where the
 * encrypted bytes wait. `writableLength` is the fallback should the handle not say.
 */
function queuedBytes(socket: Socket): number {
  const queued = (socket as Socket & { _handle?: { writeQueueSize?: unknown } | null })._handle?.writeQueueSize;
  return typeof queued === 'number' ? queued : socket.writableLength;
}

/** Requests received on a socket whose answers have not closed yet (the TLS socket for HTTPS). */
const WAITING = Symbol('requests waiting for their answers');
type CountedSocket = Socket & { [WAITING]?: number };

/** A plain function, not a closure: it runs for every request (`this` is the answer). */
function onAnswerClosed(this: ServerResponse): void {
  const socket = this.req.socket as CountedSocket;
  socket[WAITING] = (socket[WAITING] ?? 1) - 1;
}

/**
 * Bounds what one connection can hold whatever its client does (SECURITY.md, "Limits"): Node's
 * own timeouts cover only the request, so a client that pipelines requests and never reads the
 * answers would otherwise hold its socket, and every answer queued behind it, forever.
 *
 * - No progress: an answer with bytes waiting that the kernel has not taken for `sendTimeoutMs`
 *   (the peer's window stayed shut) ends the connection. Progress is measured on the TCP socket,
 *   so it holds for any answer, written at once or streamed, plain or TLS.
 * - Pipelining: over `maxPipelinedRequests` requests waiting for their answers ends the
 *   connection; Node itself parses a whole read's worth (up to 64 KiB) of pipelined requests
 *   before it pauses, each with an answer held in memory.
 * - Sockets taken over from the HTTP layer (CONNECT, requests the parser refused) have no error
 *   listener or timeout of Node's any more: they get both here, and are closed when draining.
 *
 * One interval per server walks the open connections: nothing is added per write.
 */
export class ConnectionGuard {
  readonly #sockets = new Map<Socket, Watched>();
  readonly #limits: ConnectionGuardLimits;
  readonly #logger: Logger;
  readonly #timer: NodeJS.Timeout;

  constructor(limits: ConnectionGuardLimits, logger: Logger) {
    this.#limits = limits;
    this.#logger = logger;
    this.#timer = setInterval(() => this.#check(performance.now()), limits.checkIntervalMs).unref();
  }

  /** Starts watching a TCP connection (the server's `connection` event, for HTTP and HTTPS). */
  readonly watch = (socket: Socket): Watched => {
    const watched: Watched = { queued: 0, stalledSince: undefined, takenOverAt: undefined };
    this.#sockets.set(socket, watched);
    socket.once('close', () => this.#sockets.delete(socket));
    return watched;
  };

  /** Wraps the request handler: counts the requests each connection has waiting for answers. */
  handler(app: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    const max = this.#limits.maxPipelinedRequests;
    return (req, res) => {
      const socket = req.socket as CountedSocket;
      // Node keeps parsing what it has read after a destroy: the rest of the flood is dropped here.
      if (socket.destroyed) return;
      const waiting = (socket[WAITING] ?? 0) + 1;
      if (waiting > max) {
        this.#logger.warn('connection closed: too many pipelined requests waiting for their answers', { limit: max });
        socket.destroy();
        return;
      }
      socket[WAITING] = waiting;
      res.on('close', onAnswerClosed);
      app(req, res);
    };
  }

  /**
   * A socket the HTTP layer no longer owns: errors (a reset while the answer is on its way) are
   * expected and must not reach the process, and it closes `lingerMs` after this at the latest.
   */
  takeOver(socket: Socket): void {
    socket.on('error', (err: NodeJS.ErrnoException) => this.#logger.debug('connection error after its answer', { code: err.code }));
    // Over TLS this is the TLS socket, which the server's `connection` event never showed.
    const watched = this.#sockets.get(socket) ?? this.watch(socket);
    watched.takenOverAt ??= performance.now();
  }

  /** Draining: sockets taken over have nothing left in flight worth waiting for. */
  closeTakenOver(): void {
    for (const [socket, watched] of this.#sockets) if (watched.takenOverAt !== undefined) socket.destroy();
  }

  /** The drain deadline: whatever is still open is closed. */
  closeAll(): void {
    for (const socket of this.#sockets.keys()) socket.destroy();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  #check(now: number): void {
    const { sendTimeoutMs, lingerMs } = this.#limits;
    for (const [socket, watched] of this.#sockets) {
      if (watched.takenOverAt !== undefined && now - watched.takenOverAt >= lingerMs) {
        socket.destroy();
        continue;
      }
      const queued = queuedBytes(socket);
      if (queued === 0) {
        watched.stalledSince = undefined;
        continue;
      }
      if (watched.stalledSince === undefined || queued !== watched.queued) {
        watched.queued = queued;
        watched.stalledSince = now;
      } else if (now - watched.stalledSince >= sendTimeoutMs) {
        this.#logger.warn('connection closed: its answer made no progress', { sendTimeoutMs, queuedBytes: queued });
        socket.destroy();
      }
    }
  }
}
