import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError, MESSAGES, PreconditionFailedError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { ClientAbortedError } from './body.ts';
import type { Cors } from './cors.ts';
import { pathOf, unreadBody } from './request.ts';
import { writeEnvelope, writeJson } from './respond.ts';
import type { Reply } from './route.ts';

/** Sends a request's one answer; `start` is its `performance.now()` at arrival, for the request log. */
export type SendReply = (req: IncomingMessage, res: ServerResponse, reqId: string, start: number, reply: Reply) => void;
/** Answers a request whose handling threw; the same arguments as SendReply, with the error. */
export type SendFailure = (req: IncomingMessage, res: ServerResponse, reqId: string, start: number, err: unknown) => void;

export interface ReplyWriterOptions {
  logger: Logger;
  /** undefined: CORS off. */
  cors: Cors | undefined;
  /** While true, answers carry `Connection: close` so keep-alive clients move on. */
  isDraining: () => boolean;
}

/** How an app turns replies and failures into answers and request log lines, built once per app. */
export function createReplyWriter({ logger, cors, isDraining }: ReplyWriterOptions): { send: SendReply; fail: SendFailure } {
  const logRequests = logger.isEnabled('info');

  const send: SendReply = (req, res, reqId, start, reply) => {
    let headers = reply.headers;
    if (cors !== undefined) headers = { ...cors.responseHeaders(req.headers.origin), ...headers };
    // Nothing is ever upgraded: after declining, Node's parser may not read the connection again.
    if (isDraining() || req.headers.upgrade !== undefined || unreadBody(req)) headers = { ...headers, connection: 'close' };
    if (reply.body !== undefined) writeJson(res, reqId, reply.status, reply.body, headers);
    else writeEnvelope(res, reqId, reply.status, reply.message, reply.data, headers);
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

  const fail: SendFailure = (req, res, reqId, start, err) => {
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
      send(req, res, reqId, start, { status: 412, message: MESSAGES.preconditionFailed, data: 'null' });
      return;
    }
    if (err instanceof HttpError) {
      send(req, res, reqId, start, { status: err.status, message: err.message, data: 'null', ...(err.headers && { headers: err.headers }) });
      return;
    }
    logger.error('unexpected failure while handling a request', { reqId, err: err as Error });
    send(req, res, reqId, start, { status: 500, message: MESSAGES.internalError, data: 'null' });
  };

  return { send, fail };
}
