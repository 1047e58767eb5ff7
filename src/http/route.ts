import type { IncomingMessage } from 'node:http';
import type { Message } from '../errors.ts';

export interface RequestContext {
  readonly req: IncomingMessage;
  /** Path parameters in pattern order. */
  readonly params: readonly string[];
  /** The peer's address, for login throttling. */
  readonly clientAddress: string;
}

/** A handler's answer; `data` is JSON text ('null' when there is no payload; unused with `body`). */
export interface Reply {
  readonly status: number;
  readonly message: Message;
  readonly data: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The exact bytes to send, when the answer was made ahead of time: an envelope already encoded
   * (GET /books, the 401s) or, for GET /openapi.json alone, a document sent without the envelope.
   * A StreamedBody (GET /books) is written piece by piece. Absent: the envelope is built from
   * `status`, `message` and `data`.
   */
  readonly body?: string | Buffer | StreamedBody;
}

/**
 * A body too large to hold as one string: its exact UTF-8 length (for Content-Length) and its
 * text in pieces, written with backpressure (see `sendStreamed`).
 */
export interface StreamedBody {
  readonly length: number;
  chunks(): Iterator<string>;
}

export interface Route {
  /** Protected routes are refused with 401 before the handler runs (docs/contract.md, "Authentication"). */
  readonly auth: boolean;
  readonly handle: (ctx: RequestContext) => Reply | Promise<Reply>;
}
