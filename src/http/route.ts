import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Answer } from './messages.ts';
import type { Operation } from './openapi-types.ts';
import type { Method } from './router.ts';

/** `{id}` in a pattern becomes `params.id`. */
export type ParamsOf<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? { readonly [K in Name]: string } & ParamsOf<Rest> : {};

/** One request while it is handled: everything a handler and the reply writer need about it. */
export interface RequestContext<Params = Readonly<Record<string, string>>> {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The X-Request-Id sent back and logged. */
  readonly reqId: string;
  /** `performance.now()` at arrival, for the request log's responseTime and the duration metric; 0 when neither is kept (ReplyWriter.timed). */
  readonly start: number;
  /** Path parameters by name. */
  readonly params: Params;
  /** The matched route's pattern, or `unmatched`: the metrics' label, never the raw path. */
  readonly route: string;
}

/**
 * An envelope answer: a status and message from ANSWERS; `data` is JSON text ('null' when there is
 * no payload; unused with `body`).
 */
export type EnvelopeReply = Answer & {
  readonly data: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The envelope already made: encoded once for answers made ahead of time (the 401s), or a
   * PiecewiseBody written piece by piece (GET /books). Absent: built from `status`, `message`, `data`.
   */
  readonly body?: Buffer | PiecewiseBody;
};

/**
 * A body too large to hold as one string: its exact length in bytes on the wire (for
 * Content-Length), and its text in pieces, written with backpressure (see `sendPiecewise`).
 * `chunks` is called once per answer sent; the iterator is returned (`return()`) when the answer
 * ends, finished or cut.
 */
export interface PiecewiseBody {
  /** undefined: not known before it is sent (a compressed list some of whose pages are not compressed yet), so it goes chunked. */
  readonly length: number | undefined;
  /** Bytes of the body before any content coding: what its pieces' `bytes` add up to. */
  readonly size: number;
  chunks(sending: StreamSending): Iterator<BodyPiece>;
  /** The same body gzip-encoded, for a request that takes it (http/content-coding.ts); absent: always sent as it is. */
  gzip?(): PiecewiseBody;
}

/**
 * One piece of a streamed body: text, or bytes already encoded (a gzip-encoded list's deflate
 * segments), and how many bytes of the body before any content coding it carries, as the body
 * knows it (the page texts carry their UTF-8 length): progress (the floor, the memory budget's
 * rate) is counted in those, without measuring each piece again, and alike for either coding.
 * Within a page they may be shared out in proportion to its characters.
 */
export interface BodyPiece {
  readonly text: string | Buffer;
  readonly bytes: number;
}

/** One streamed answer as its pieces are sent: what a body's pieces may ask of it. */
export interface StreamSending {
  /** Bytes of the body handed to the socket so far. */
  sent(): number;
  /** Ends the answer by closing its connection, logging `why` (a warning). */
  cut(why: string): void;
}

/**
 * An answer sent without the envelope: GET /openapi.json, since tools that read OpenAPI documents
 * expect the document itself at its URL, the built-in page and its assets, and the metrics
 * listener's exposition (which name their own `content-type`). Its ETag makes it conditional, as
 * an envelope's does (http/preconditions.ts).
 */
export interface DocumentReply {
  readonly status: 200;
  readonly body: string | Buffer;
  readonly headers?: Readonly<Record<string, string>>;
  readonly message?: undefined;
}

/**
 * GET /events alone: the answer that writes itself. `stream` writes its own head and frames, given
 * the headers the reply writer adds (CORS); errors before it starts are envelopes. (A full GET
 * /books list is streamed too, but as an envelope the reply writer sends: EnvelopeReply's `body`.)
 */
export interface StreamReply {
  readonly status: 200;
  readonly stream: (headers: Readonly<Record<string, string>> | undefined) => void;
  readonly message?: undefined;
  readonly headers?: undefined;
}

/** A handler's answer. */
export type Reply = EnvelopeReply | DocumentReply | StreamReply;

export type Handler<Params = Readonly<Record<string, string>>> = (ctx: RequestContext<Params>) => Reply | Promise<Reply>;

/**
 * A route: where it answers, whether it needs a token, its OpenAPI operation, and how to build its
 * handler from what it needs (`Deps`), once per app. The OpenAPI document is built from the table
 * of routes, so a route and its documentation are one change in one place.
 */
export interface Route<Deps = unknown> {
  readonly method: Exclude<Method, 'HEAD'>;
  readonly pattern: string;
  /** The path's name in the OpenAPI document (`${pathName}Options`); the first route of a path names it. */
  readonly pathName?: string;
  /** Protected routes are refused with 401 before the handler runs (docs/contract.md, "Authentication"). */
  readonly auth: boolean;
  /**
   * GET /events alone: it answers a stream, which has no representation to be current or stale,
   * so preconditions neither apply (see the reply writer) nor are documented.
   */
  readonly stream?: true;
  /**
   * GET /events alone: a request without a token may carry an event ticket in the query instead,
   * since a browser's EventSource cannot send headers (docs/contract.md, "Event tickets").
   */
  readonly ticket?: true;
  readonly operation: Operation;
  handler(deps: Deps): Handler;
}

/** A route whose handler sees its pattern's parameters by name (`/book/{id}` → `params.id`). */
export function defineRoute<const P extends string, Deps>(
  route: Omit<Route<Deps>, 'pattern' | 'handler'> & {
    readonly pattern: P;
    handler(deps: Deps): Handler<ParamsOf<P>>;
  },
): Route<Deps> {
  return route as unknown as Route<Deps>;
}
