import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1): the interim 100 is sent only when the body is about
 * to be read, so an answer already known from the headers (404, 405, 401, 413 by Content-Length,
 * 429, an invalid id) goes out as the final status and the client never uploads the body
 * (docs/contract.md, "Bodies"). Requests whose 100 is still owed, with the answer to send it on.
 */
const owed = new WeakMap<IncomingMessage, ServerResponse>();

/** The server's 'checkContinue' listener records the request here instead of answering 100 at once. */
export function deferContinue(req: IncomingMessage, res: ServerResponse): void {
  owed.set(req, res);
}

/** Before the first byte of the body is read: the client is waiting for this to send it. */
export function sendContinue(req: IncomingMessage): void {
  const res = owed.get(req);
  if (res === undefined) return;
  owed.delete(req);
  res.writeContinue();
}

/** True when the client was never told to send its body: it may or may not, so the connection cannot be reused. */
export function continueOwed(req: IncomingMessage): boolean {
  return owed.has(req);
}
