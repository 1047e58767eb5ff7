import { ServerResponse, type IncomingMessage } from 'node:http';

/**
 * The ServerResponse class of a server whose answers are charged to the memory budget as they are
 * written: after each `write` and `end` (the bytes are then in the socket's buffer, or held by
 * Node for a pipelined answer's turn), `written` is told which answer wrote. A subclass, not a
 * listener or a wrapper per answer: a write costs one more call and no answer allocates anything.
 * The arguments are passed on as they came; Node sorts out which is which.
 */
export function chargedResponses(written: (res: ServerResponse) => void): typeof ServerResponse {
  return class ChargedResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    override write(chunk: unknown, encoding?: unknown, callback?: unknown): boolean {
      const ok = super.write(chunk, encoding as BufferEncoding, callback as (error: Error | null | undefined) => void);
      written(this);
      return ok;
    }

    override end(chunk?: unknown, encoding?: unknown, callback?: unknown): this {
      super.end(chunk, encoding as BufferEncoding, callback as () => void);
      written(this);
      return this;
    }
  };
}
