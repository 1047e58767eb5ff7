import type { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Logger } from '../log.ts';
import type { Charge, MemoryBudget } from '../memory/budget.ts';
import { answerBeingSent, dropUnheld, heldAnswerBytes, unsentAnswerBytes } from './answer-bytes.ts';
import { ClientAddresses, type AddressLoad } from './client-addresses.ts';
import { throttledWarning, type RefusalReason } from './connection-events.ts';
import { queuedBytes, resetConnection, sentBytes } from './socket-bytes.ts';

/** What one connection is watched for; the limits come from TRANSPORT_LIMITS. */
export interface ConnectionGuardLimits {
  /** An answer with bytes waiting that the kernel has not taken for this long: the connection is closed. */
  sendTimeoutMs: number;
  /** More requests than this waiting for their answers on one connection: it is closed. */
  maxPipelinedRequests: number;
  /** As many for a request without a valid token (1: it may not be pipelined at all). */
  maxPipelinedWithoutToken: number;
  /** Connections open from one client address; more are closed on arrival (0: no limit). */
  maxConnectionsPerAddress: number;
  /** Requests from one client address waiting for their answers, across its connections (0: no limit). */
  maxInFlightPerAddress: number;
  /** How long a socket taken over from the HTTP layer may stay open after it is taken over. */
  lingerMs: number;
  /** How often the timeouts above are checked, and the memory budget told what answers hold. */
  checkIntervalMs: number;
}

export interface ConnectionGuardOptions {
  logger: Logger;
  /** Clock in milliseconds, for rate-limiting warnings. */
  now: () => number;
  /** Where connections report the answer bytes their sockets have not taken (`answers_in_flight`); undefined: nowhere. */
  budget: MemoryBudget | undefined;
  /** Whether a request carries a valid token; undefined: any request may be pipelined up to maxPipelinedRequests. */
  hasValidToken: ((req: IncomingMessage) => boolean) | undefined;
  /** Told of each connection closed on arrival because its address has maxConnectionsPerAddress open. */
  onRefused: ((reason: RefusalReason) => void) | undefined;
}

interface Watched {
  /** The TCP socket: where answer bytes wait for the kernel, and what a reset closes. */
  readonly socket: Socket;
  /** The socket requests arrive on: the TCP socket, or the TLS socket over it. */
  http: Socket;
  /** Bytes waiting for the kernel to take them, at the last check. */
  queued: number;
  /** When `queued` last moved, or when bytes started waiting; undefined while nothing waits. */
  stalledSince: number | undefined;
  /** When a CONNECT or a request Node's parser refused took the socket from the HTTP layer. */
  takenOverAt: number | undefined;
  /** Requests received on it whose answers have not closed. */
  waiting: number;
  /** Its client address's load; undefined when no per-address limit is set. */
  readonly load: AddressLoad | undefined;
  /** Answers to pipelined requests, which their responses hold until the answers before them are sent. */
  held: ServerResponse[] | undefined;
  /** The last request answered before its body was read (docs/contract.md, "Bodies"). */
  answeredEarly: IncomingMessage | undefined;
  /** Its account with the memory budget, from the first check that found answer bytes waiting. */
  charge: Charge | undefined;
  closed: boolean;
}

const WATCHED = Symbol('the guard\'s record of the connection');
type Tagged = Socket & { [WATCHED]?: Watched };

/** An answer after which its connection closes: said by its request, its own headers, or its route. */
function closesItsConnection(res: ServerResponse | null): boolean {
  return res !== null && (!res.shouldKeepAlive || (res as ServerResponse & { _last?: boolean })._last === true);
}

/** Whether an answer being sent on the connection `http`, or held behind it, closes the connection. */
function closingAhead(http: Socket, held: readonly ServerResponse[] | undefined): boolean {
  return closesItsConnection(answerBeingSent(http)) || (held?.some(closesItsConnection) ?? false);
}

/** A plain function, not a closure: it runs for every request (`this` is the answer). */
function onAnswerClosed(this: ServerResponse): void {
  const watched = (this.req.socket as Tagged)[WATCHED] as Watched;
  watched.waiting--;
  if (!this.req.complete) watched.answeredEarly = this.req;
  // A connection that closed has given back what was still in flight on it.
  if (watched.load !== undefined && !watched.closed) watched.load.inFlight--;
}

/**
 * Bounds what one connection, and one client address, can hold whatever its client does
 * (SECURITY.md, "Limits"): Node's own timeouts cover only the request, so a client that pipelines
 * requests and never reads the answers would otherwise hold its socket, and every answer queued
 * behind it, forever.
 *
 * - No progress: an answer with bytes waiting that the kernel has not taken for `sendTimeoutMs`
 *   (the peer's window stayed shut) ends the connection. Progress is measured on the TCP socket,
 *   so it holds for any answer, written at once or streamed, plain or TLS.
 * - Pipelining: over `maxPipelinedRequests` requests waiting for their answers ends the
 *   connection; Node itself parses a whole read's worth (up to 64 KiB) of pipelined requests
 *   before it pauses, each with an answer held in memory. A request without a valid token may
 *   wait behind at most `maxPipelinedWithoutToken - 1` others: no client without a token
 *   pipelines (browsers never do), so a client without one gets one answer per round trip, not
 *   sixteen per packet it sends.
 * - Per address: a connection beyond `maxConnectionsPerAddress` from one address is closed on
 *   arrival, and a request beyond `maxInFlightPerAddress` waiting across them closes its connection.
 * - Memory: each write of an answer (`written`) and every check report the answer bytes its
 *   connection holds (its sockets' queues and the answers held for pipelined requests) to the
 *   memory budget as `answers_in_flight`; when the budget sheds one, its connection is reset. The
 *   check catches what the sockets have taken since the last write.
 * - Sockets taken over from the HTTP layer (CONNECT, requests the parser refused) have no error
 *   listener or timeout of Node's any more: they get both here, and are closed when draining.
 *
 * Connections a client misuses are reset (socket-bytes.ts). One interval per server walks the
 * open connections; a request costs a few increments, and a write a few property reads.
 */
export class ConnectionGuard {
  readonly #sockets = new Map<Socket, Watched>();
  readonly #addresses = new ClientAddresses();
  readonly #limits: ConnectionGuardLimits;
  readonly #perAddress: boolean;
  readonly #logger: Logger;
  readonly #budget: MemoryBudget | undefined;
  readonly #hasValidToken: ((req: IncomingMessage) => boolean) | undefined;
  readonly #onRefused: ((reason: RefusalReason) => void) | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #warn: Readonly<Record<'perAddress' | 'pipelined' | 'withoutToken' | 'afterClose' | 'inFlight' | 'shed', (latest?: { address: string }) => void>>;

  constructor(limits: ConnectionGuardLimits, options: ConnectionGuardOptions) {
    this.#limits = limits;
    this.#perAddress = limits.maxConnectionsPerAddress > 0 || limits.maxInFlightPerAddress > 0;
    this.#logger = options.logger;
    this.#budget = options.budget;
    this.#hasValidToken = options.hasValidToken;
    this.#onRefused = options.onRefused;
    const warning = (message: string, fields: Record<string, number>) => throttledWarning(options.logger, options.now, message, fields);
    this.#warn = {
      perAddress: warning('connections refused: MAX_CONNECTIONS_PER_ADDRESS are open from their address', { limit: limits.maxConnectionsPerAddress }),
      pipelined: warning('connections closed: too many pipelined requests waiting for their answers', { limit: limits.maxPipelinedRequests }),
      withoutToken: warning('connections closed: a request without a valid token was pipelined', { limit: limits.maxPipelinedWithoutToken }),
      afterClose: warning('requests not run: pipelined behind an answer that closes their connection', {}),
      inFlight: warning('connections closed: MAX_IN_FLIGHT_PER_ADDRESS requests from their address are waiting for their answers', { limit: limits.maxInFlightPerAddress }),
      shed: warning('connections closed: the memory budget is spent and their answers moved least', {}),
    };
    this.#timer = setInterval(() => this.#check(performance.now()), limits.checkIntervalMs).unref();
  }

  /** Admits and watches a TCP connection (the server's `connection` event, for HTTP and HTTPS). */
  readonly watch = (socket: Socket): void => {
    let load: AddressLoad | undefined;
    if (this.#perAddress) {
      const address = socket.remoteAddress;
      // No address: the peer is already gone.
      if (address === undefined) return void socket.destroy();
      load = this.#addresses.connect(address, this.#limits.maxConnectionsPerAddress);
      if (load === undefined) {
        this.#onRefused?.('per_address');
        this.#warn.perAddress({ address });
        return resetConnection(socket);
      }
    }
    this.#track(socket, load);
  };

  /** Wraps the request handler: counts the requests each connection and address have waiting for answers. */
  handler(app: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
    const { maxPipelinedRequests, maxPipelinedWithoutToken, maxInFlightPerAddress } = this.#limits;
    return (req, res) => {
      const socket = req.socket as Tagged;
      // Node keeps parsing what it has read after a destroy: the rest of the flood is dropped here.
      if (socket.destroyed) return;
      // Nor is anything run once the answers are over: after one that closed the connection, Node
      // ends the socket but reads on until that is done (RFC 9112 §9.6, as for `afterClose` below).
      if (socket.writableEnded) return this.#warn.afterClose();
      const watched = socket[WATCHED] ?? this.#adopt(socket);
      const waiting = watched.waiting + 1;
      if (waiting > maxPipelinedWithoutToken) {
        if (waiting > maxPipelinedRequests) return this.#refuse(watched, this.#warn.pipelined);
        // Verified only here, on the pipelined path: one request at a time costs no second check.
        if (this.#hasValidToken?.(req) === false) return this.#refuse(watched, this.#warn.withoutToken);
      }
      // RFC 9112 §9.6: after an answer that closes the connection, no further request is processed;
      // an event stream's never ends. Such a request is counted (so the limits above bound them) but
      // not run: its answer could never be sent.
      const afterClose = waiting > 1 && closingAhead(watched.http, watched.held);
      const { load } = watched;
      if (load !== undefined) {
        if (maxInFlightPerAddress > 0 && load.inFlight >= maxInFlightPerAddress) return this.#refuse(watched, this.#warn.inFlight);
        load.inFlight++;
      }
      watched.waiting = waiting;
      // Pipelined behind an answer still being sent: its response holds what it writes until its turn.
      if (res.socket === null) {
        const held = (watched.held ??= []);
        dropUnheld(held);
        held.push(res);
      }
      res.on('close', onAnswerClosed);
      if (afterClose) {
        // Its body is read and dropped, as Node does for an answered request's: left unread, it
        // would stop the connection being read, and a client's FIN with it.
        req.resume();
        return this.#warn.afterClose();
      }
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
    const watched = this.#sockets.get(socket) ?? this.#track(socket, undefined);
    watched.takenOverAt ??= performance.now();
  }

  /**
   * An answer wrote (charged-response.ts): what its connection's answers hold is reported at once,
   * so a burst of answers written within one check cannot spend the budget past its limit. A few
   * property reads when its socket took the bytes; a pass over the answers held behind it (at most
   * `maxPipelinedRequests`) when requests are pipelined.
   */
  readonly written = (res: ServerResponse): void => {
    const budget = this.#budget;
    if (budget === undefined) return;
    const watched = (res.req.socket as Tagged)[WATCHED];
    if (watched !== undefined && !watched.closed) this.#charge(watched, budget);
  };

  /**
   * Runs `then` once every answer on the connection `http` has closed (at once when none is open):
   * when the last of them closes, since they are sent in order. Never, when that one is never sent.
   */
  afterAnswers(http: Socket, then: () => void): void {
    const held = (http as Tagged)[WATCHED]?.held;
    if (held !== undefined) dropUnheld(held);
    const last = held?.at(-1) ?? answerBeingSent(http);
    if (last === null) then();
    else last.once('close', then);
  }

  /**
   * Whether the request whose body the connection is reading has had its answer: one sent before
   * the body was read, and closed. A fault in that body then has no answer of its own to get.
   */
  answeredBeforeItsBody(socket: Socket): boolean {
    const early = (socket as Tagged)[WATCHED]?.answeredEarly;
    return early !== undefined && !early.complete;
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

  #track(socket: Socket, load: AddressLoad | undefined): Watched {
    const watched: Watched = {
      socket,
      http: socket,
      queued: 0,
      stalledSince: undefined,
      takenOverAt: undefined,
      waiting: 0,
      load,
      held: undefined,
      answeredEarly: undefined,
      charge: undefined,
      closed: false,
    };
    this.#sockets.set(socket, watched);
    (socket as Tagged)[WATCHED] ??= watched;
    socket.once('close', () => this.#forget(watched));
    return watched;
  }

  /**
   * The TLS socket of a connection, at its first request: its record is the TCP socket's, which
   * Node's TLSSocket keeps as `_parent`; should it not, the TLS socket is watched on its own.
   */
  #adopt(http: Tagged): Watched {
    const parent = (http as Socket & { _parent?: unknown })._parent;
    const watched = (parent instanceof Socket ? (parent as Tagged)[WATCHED] : undefined) ?? this.#track(http, undefined);
    watched.http = http;
    http[WATCHED] = watched;
    return watched;
  }

  #forget(watched: Watched): void {
    if (watched.closed) return;
    watched.closed = true;
    this.#sockets.delete(watched.socket);
    watched.charge?.release();
    if (watched.load !== undefined) {
      watched.load.inFlight -= watched.waiting;
      this.#addresses.disconnect(watched.load);
    }
  }

  #refuse(watched: Watched, warn: () => void): void {
    warn();
    resetConnection(watched.socket);
  }

  #check(now: number): void {
    const { sendTimeoutMs, lingerMs } = this.#limits;
    for (const [socket, watched] of this.#sockets) {
      if (watched.takenOverAt !== undefined && now - watched.takenOverAt >= lingerMs) {
        socket.destroy();
        continue;
      }
      if (this.#budget !== undefined) this.#charge(watched, this.#budget);
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
        resetConnection(socket);
      }
    }
  }

  /**
   * Reports what the connection's answers hold now: after each write, and at each check, which
   * lowers the charge by what the sockets have taken since (SECURITY.md, "Memory budget").
   */
  #charge(watched: Watched, budget: MemoryBudget): void {
    let bytes = unsentAnswerBytes(watched.socket, watched.http);
    if (watched.held !== undefined) {
      bytes += heldAnswerBytes(watched.held);
      if (watched.held.length === 0) watched.held = undefined;
    }
    if (bytes === 0 && watched.charge === undefined) return;
    watched.charge ??= budget.add({
      kind: 'answers_in_flight',
      moved: () => sentBytes(watched.http),
      shed: () => {
        this.#warn.shed();
        resetConnection(watched.socket);
        watched.charge?.release();
      },
    });
    watched.charge.set(bytes);
  }
}
