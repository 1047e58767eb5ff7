import type { ServerResponse } from 'node:http';
import type { StreamedBody } from './route.ts';

/**
 * Bytes (roughly: UTF-16 units) written in one event-loop turn at most. A reader on loopback can
 * take megabytes as fast as they are written; without a cap one answer would hold the loop for
 * its whole length and stall every other client.
 */
const TURN_BUDGET = 1 << 18;

/**
 * Writes a body after its headers, one piece at a time: waits for 'drain' whenever the socket's
 * buffer is full (so a slow or stalled reader holds one piece, not the answer), yields the loop
 * once TURN_BUDGET is spent, and stops when the connection closes, dropping the pieces still to
 * come. The budget is spent across 'drain's and renewed only by that yield: a write the kernel
 * takes at once emits 'drain' from process.nextTick, so a fast reader's drains would otherwise
 * chain without ever returning to the loop, and four of them held it for hundreds of ms at 1M books.
 * Whatever cuts off a connection that stops reading (a send timeout) ends it through 'close'.
 * HEAD sends the headers alone.
 */
export function sendStreamed(res: ServerResponse, body: StreamedBody): void {
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  let chunks: Iterator<string> | undefined = body.chunks();
  // One piece ahead, so the last goes out with `end`: a small body is then one write, as before.
  let ahead = chunks.next();
  let budget = TURN_BUDGET;
  const write = (): void => {
    while (chunks !== undefined && ahead.done !== true) {
      if (budget <= 0) {
        setImmediate(nextTurn);
        return;
      }
      const piece = ahead.value;
      ahead = chunks.next();
      if (ahead.done === true) {
        chunks = undefined;
        res.end(piece);
        return;
      }
      budget -= piece.length;
      if (!res.write(piece)) {
        res.once('drain', write);
        return;
      }
    }
    if (chunks !== undefined) res.end();
  };
  const nextTurn = (): void => {
    budget = TURN_BUDGET;
    write();
  };
  res.once('close', () => {
    chunks = undefined;
    res.off('drain', write);
  });
  write();
}
