import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { queuedBytes } from './socket-bytes.ts';

/** What a connection's answers hold in user space, for the memory budget (`answers_in_flight`). */

const CHARGES_ITSELF = Symbol('an answer that reports its own bytes to the memory budget');
type Marked = ServerResponse & { [CHARGES_ITSELF]?: true };

/**
 * Marks an answer that reports what it holds to the memory budget itself (an event stream): its
 * bytes are not counted again as `answers_in_flight`.
 */
export function chargesItself(res: ServerResponse): void {
  (res as Marked)[CHARGES_ITSELF] = true;
}

/**
 * The answer that has the connection `http` now (Node's own field, which its server and its
 * 'clientError' handler read too): null between answers.
 */
export function answerBeingSent(http: Socket): ServerResponse | null {
  return (http as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
}

/**
 * Answer bytes written to a connection that its sockets have not written yet: `socket` is the TCP
 * socket, `http` the one requests arrive on (the same, or the TLS socket over it, whose plain text
 * waits for the TLS layer while the encrypted bytes wait in the TCP socket's queue). Nothing when
 * the answer being sent reports its own.
 */
export function unsentAnswerBytes(socket: Socket, http: Socket): number {
  const current = answerBeingSent(http);
  if (current !== null && CHARGES_ITSELF in current) return 0;
  return http === socket ? socket.writableLength : queuedBytes(socket) + http.writableLength;
}

/**
 * Drops from `held` (answers to pipelined requests, which Node keeps until the answers before them
 * are sent), in place, those that have since been given the socket, finished or gone: what is left
 * is at most the requests waiting on the connection.
 */
export function dropUnheld(held: ServerResponse[]): void {
  let kept = 0;
  for (const res of held) if (res.socket === null && !res.writableFinished && !res.destroyed) held[kept++] = res;
  held.length = kept;
}

/** Bytes held by the answers in `held` (their bytes are not the socket's yet), after `dropUnheld`. */
export function heldAnswerBytes(held: ServerResponse[]): number {
  dropUnheld(held);
  let bytes = 0;
  for (const res of held) if (!(CHARGES_ITSELF in res)) bytes += res.writableLength;
  return bytes;
}
