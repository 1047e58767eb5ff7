import type { IncomingMessage } from 'node:http';
import { LogRate, REPEATED_FAILURE_LOG_MS, type Logger } from '../log.ts';
import { ClientAbortedError } from './body.ts';
import type { Cors } from './cors.ts';
import { encodeReply } from './content-coding.ts';
import { ANSWERS, HttpError } from './messages.ts';
import { addVary } from './header-value.ts';
import { evaluatePreconditions, hasPreconditions, type PreconditionOutcome } from './preconditions.ts';
import { pathOf, unreadBodyForcesClose } from './request.ts';
import { envelopeReply, writeBody, writeEnvelope, writeNotModified, writePiecewiseJson } from './respond.ts';
import type { Reply, RequestContext } from './route.ts';
import type { ProgressFloor } from './piecewise-body.ts';

/** The route of a request no route matched: a metric label is never the raw path (unbounded, holds ids). */
export const UNMATCHED_ROUTE = 'unmatched';

const CLOSE = { connection: 'close' } as const;
const INTERNAL_ERROR = envelopeReply(ANSWERS.internalError, 'null');
const PRECONDITION_FAILED = envelopeReply(ANSWERS.preconditionFailed, 'null');

/**
 * A read's preconditions against the representation its answer carries (its ETag, if any). A
 * write's are the store's condition instead (books/etag.ts), decided against the state it
 * replaces; the event stream has no representation to be current or stale.
 */
function readPrecondition(req: IncomingMessage, reply: Reply): PreconditionOutcome {
  const method = req.method as string;
  if ((method !== 'GET' && method !== 'HEAD') || 'stream' in reply) return 'proceed';
  return evaluatePreconditions(method, req.headers, reply.headers?.etag);
}

/**
 * The CORS headers and the answer's, the answer's winning; both may name what the answer varies
 * on (Origin; Accept-Encoding, content-coding.ts), and a cache must know of every one.
 */
function withCors(corsHeaders: Readonly<Record<string, string>>, headers: Readonly<Record<string, string>> | undefined): Readonly<Record<string, string>> {
  const merged: Record<string, string> = Object.assign({}, corsHeaders, headers);
  const vary = headers?.vary;
  if (corsHeaders.vary !== undefined && vary !== undefined) merged.vary = addVary(corsHeaders.vary, vary);
  return merged;
}

/** Told of every answer (the metrics' RequestMetrics); `route` is a pattern or UNMATCHED_ROUTE. */
export interface RequestRecorder {
  record(method: string, route: string, status: number, seconds: number): void;
}

/** Sends a request's one answer, logs it and counts it. */
export type SendReply = (ctx: RequestContext, reply: Reply) => void;
/** Answers a request whose handling threw. */
export type SendFailure = (ctx: RequestContext, err: unknown) => void;

export interface ReplyWriterOptions {
  logger: Logger;
  /** undefined: CORS off. */
  cors: Cors | undefined;
  /** While true, answers carry `Connection: close` so keep-alive clients move on. */
  isDraining: () => boolean;
  /** The answer to a library fault a request can meet (a refused book, a failed condition); undefined: a 500. */
  answerFault: (err: unknown) => Reply | undefined;
  /** undefined: no request metrics. */
  requests: RequestRecorder | undefined;
  /** What a streamed answer (GET /books in full) must keep up with. */
  floor: ProgressFloor;
}

/** What createReplyWriter makes: the writers, and whether a request's arrival must be timed. */
export interface ReplyWriter {
  send: SendReply;
  fail: SendFailure;
  /**
   * Whether answers are timed (request lines logged, or request metrics): when not, a request's
   * `start` is 0 and no clock is read for it, at arrival or at its end.
   */
  timed: boolean;
}

/** Unexpected failures logged in full per REPEATED_FAILURE_LOG_MS before the rest of them are only counted. */
export const UNEXPECTED_BURST = 10;

/** How an app turns replies and failures into answers and request log lines, built once per app. */
export function createReplyWriter({ logger, cors, isDraining, answerFault, requests, floor }: ReplyWriterOptions): ReplyWriter {
  const logRequests = logger.isEnabled('info');
  const timed = logRequests || requests !== undefined;
  const streaming = { floor, logger };
  // Each of a few failures keeps its detail under its request id; a flood (a full disk fails every
  // request alike) is cut to UNEXPECTED_BURST lines per interval.
  const unexpected = new LogRate(REPEATED_FAILURE_LOG_MS, undefined, UNEXPECTED_BURST);

  /**
   * Counts and logs an answer once it is written: at once for an answer written whole, at its
   * end for a streamed one (its last byte handed to the socket, or the cut, which the line says).
   */
  const answered = ({ req, reqId, start, route }: RequestContext, status: number, cut: boolean): void => {
    if (!timed) return;
    const ms = performance.now() - start;
    if (requests !== undefined) requests.record(req.method as string, route, status, ms / 1000);
    if (logRequests) {
      const fields: Record<string, unknown> = { reqId, method: req.method, path: pathOf(req.url as string), statusCode: status, responseTime: Math.round(ms * 1000) / 1000 };
      if (cut) fields.incomplete = true;
      logger.info('request', fields);
    }
  };

  /** Writes an answer in the coding the request takes (content-coding.ts): a long one made for it alone may be compressed off the loop first. */
  const send: SendReply = (ctx, reply) => {
    const encoded = encodeReply(ctx.req, reply);
    if (encoded instanceof Promise) encoded.then((ready) => write(ctx, ready)).catch((err: unknown) => fail(ctx, err));
    else write(ctx, encoded);
  };

  const write: SendReply = (ctx, given) => {
    const { req, res, reqId } = ctx;
    // Only a success is conditional (RFC 9110 §13.2.1); without If-Match or If-None-Match this costs two header reads.
    const outcome = given.status === 200 && hasPreconditions(req.headers) ? readPrecondition(req, given) : 'proceed';
    const reply = outcome === 'failed' ? PRECONDITION_FAILED : given;
    let headers = reply.headers;
    // Object.assign, not spreads: see envelopeReply (Node 20 gives each `{ ...a, ...b }` a hidden class of its own).
    if (cors !== undefined) headers = withCors(cors.responseHeaders(req.headers.origin), headers);
    // Nothing is ever upgraded: after declining, Node's parser may not read the connection again.
    if (isDraining() || req.headers.upgrade !== undefined || unreadBodyForcesClose(req)) headers = Object.assign({}, headers, CLOSE);
    const status = outcome === 'not-modified' ? 304 : reply.status;
    if (status === 304) writeNotModified(res, reqId, headers);
    else if ('stream' in reply) reply.stream(headers);
    else if (reply.message === undefined) writeBody(res, reqId, reply.status, reply.body, headers);
    else if (reply.body === undefined) writeEnvelope(res, reqId, reply.status, reply.message, reply.data, headers);
    else if (Buffer.isBuffer(reply.body)) writeBody(res, reqId, reply.status, reply.body, headers);
    else {
      writePiecewiseJson(res, reqId, status, reply.body, headers, streaming, (finished) => answered(ctx, status, !finished));
      return;
    }
    answered(ctx, status, false);
  };

  const fail: SendFailure = (ctx, err) => {
    const { res, reqId } = ctx;
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
      send(ctx, { status: err.status, message: err.message, data: 'null', ...(err.headers && { headers: err.headers }) } as Reply);
      return;
    }
    const answer = answerFault(err);
    if (answer !== undefined) {
      send(ctx, answer);
      return;
    }
    const unlogged = unexpected.due();
    if (unlogged !== undefined) logger.error('unexpected failure while handling a request', { reqId, err: err as Error, unlogged });
    send(ctx, INTERNAL_ERROR);
  };

  return { send, fail, timed };
}
