import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, MESSAGES, PreconditionFailedError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { ClientAbortedError } from './body.ts';
import type { Cors } from './cors.ts';
import { pathOf, unreadBodyForcesClose } from './request.ts';
import { writeEnvelope, writeJson } from './respond.ts';
import type { Reply } from './route.ts';

/** The route of a request no route matched: a metric label is never the raw path (unbounded, holds ids). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Told of every answer (the metrics' RequestMetrics); `route` is a pattern or UNMATCHED_ROUTE. */
export interface RequestRecorder {
  record(method: string, route: string, status: number, seconds: number): void;
}

/**
 * Sends a request's one answer; `start` is its `performance.now()` at arrival, for the request log;
 * `route` is the matched route's pattern or `unmatched` (for metrics: never the raw path).
 */
export type SendReply = (req: IncomingMessage, res: ServerResponse, reqId: string, start: number, reply: Reply, route: string) => void;
/** Answers a request whose handling threw; the same arguments as SendReply, the error in place of the reply. */
export type SendFailure = (req: IncomingMessage, res: ServerResponse, reqId: string, start: number, err: unknown, route: string) => void;

export interface ReplyWriterOptions {
  logger: Logger;
  /** undefined: CORS off. */
  cors: Cors | undefined;
  /** While true, answers carry `Connection: close` so keep-alive clients move on. */
  isDraining: () => boolean;
  /** undefined: no request metrics. */
  requests: RequestRecorder | undefined;
}

/** How an app turns replies and failures into answers and request log lines, built once per app. */
export function createReplyWriter({ logger, cors, isDraining, requests }: ReplyWriterOptions): { send: SendReply; fail: SendFailure } {
  const logRequests = logger.isEnabled('info');

  const send: SendReply = (req, res, reqId, start, reply, route) => {
    let headers = reply.headers;
    if (cors !== undefined) headers = { ...cors.responseHeaders(req.headers.origin), ...headers };
    // Nothing is ever upgraded: after declining, Node's parser may not read the connection again.
    if (isDraining() || req.headers.upgrade !== undefined || unreadBodyForcesClose(req)) headers = { ...headers, connection: 'close' };
    if (reply.body !== undefined) writeJson(res, reqId, reply.status, reply.body, headers);
    else writeEnvelope(res, reqId, reply.status, reply.message, reply.data, headers);
    if (requests !== undefined) requests.record(req.method as string, route, reply.status, (performance.now() - start) / 1000);
    if (logRequests) {
      logger.info('request', {
        reqId,
        method: req.method,
        path: pathOf(req.url as string),
        statusCode: reply.status,
        responseTime: Math.round((performance.now() - start) * 1000) / 1000,
      });
    }
  };

  const fail: SendFailure = (req, res, reqId, start, err, route) => {
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
    if (err instanceof PreconditionFailedError) {
      send(req, res, reqId, start, { status: 412, message: MESSAGES.preconditionFailed, data: 'null' }, route);
      return;
    }
    if (err instanceof HttpError) {
      send(req, res, reqId, start, { status: err.status, message: err.message, data: 'null', ...(err.headers && { headers: err.headers }) }, route);
      return;
    }
    logger.error('unexpected failure while handling a request', { reqId, err: err as Error });
    send(req, res, reqId, start, { status: 500, message: MESSAGES.internalError, data: 'null' }, route);
  };

  return { send, fail };
}
