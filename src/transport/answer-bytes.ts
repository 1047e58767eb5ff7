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

/** An answer marked by `chargesItself` (an event stream) that has not ended: it may never end. */
function endless(res: ServerResponse | null | undefined): boolean {
  return res != null && CHARGES_ITSELF in res && !res.writableEnded;
}

/**
 * Whether an event stream still going is being sent on the connection `http` or waits in `held`:
 * a request after it would never get its answer.
 */
export function behindAStream(http: Socket, held: readonly ServerResponse[] | undefined): boolean {
  return endless((http as Socket & { _httpMessage?: ServerResponse | null })._httpMessage) || (held?.some(endless) ?? false);
}

/**
 * Answer bytes written to a connection that its sockets have not written yet: `socket` is the TCP
 * socket, `http` the one requests arrive on (the same, or the TLS socket over it, whose plain text
 * waits for the TLS layer while the encrypted bytes wait in the TCP socket's queue). Nothing when
 * the answer being sent reports its own.
 */
export function unsentAnswerBytes(socket: Socket, http: Socket): number {
  const current = (http as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (current != null && CHARGES_ITSELF in current) return 0;
  return http === socket ? socket.writableLength : queuedBytes(socket) + http.writableLength;
}

/**
 * Bytes held by the answers to pipelined requests that wait for the answers before them (Node
 * keeps what they write until the socket is theirs). Drops from `held`, in place, those that have
 * since been given the socket (their bytes are the socket's now), finished or gone.
 */
export function heldAnswerBytes(held: ServerResponse[]): number {
  let bytes = 0;
  let kept = 0;
  for (const res of held) {
    if (res.socket !== null || res.writableFinished || res.destroyed) continue;
    held[kept++] = res;
    if (!(CHARGES_ITSELF in res)) bytes += res.writableLength;
  }
  held.length = kept;
  return bytes;
}
