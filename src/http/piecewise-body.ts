import type { ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import { YieldBudget } from '../loop/yield-budget.ts';
import type { PiecewiseBody, BodyPiece } from './route.ts';

/**
 * Bytes of a body (before any content coding) written in one event-loop turn at most. A reader on
 * loopback can take megabytes as fast as they are written; without a cap one answer would hold
 * the loop for its whole length and stall every other client. Counted before coding, so a
 * compressed list's pieces that are compressed as it goes (books/compressed-list-body.ts) cost a
 * turn what their text does, not what their few compressed bytes do.
 */
const TURN_BYTES = 1 << 18;

/**
 * The progress floor of a streamed answer (TRANSPORT_LIMITS `minStreamBytesPerSecond`, and
 * `sendTimeoutMs` as the lag allowed): by `t` ms after it started, at least
 * `minBytesPerSecond × (t − graceMs) / 1000` bytes must have been handed to the socket.
 */
export interface ProgressFloor {
  readonly minBytesPerSecond: number;
  readonly graceMs: number;
}

/** What every streamed answer of an app is sent with. */
export interface PiecewiseSettings {
  readonly floor: ProgressFloor;
  /** Where a cut (the floor, the memory budget) is reported, at `warn`. */
  readonly logger: Logger;
}

/**
 * Writes a body after its headers, one piece at a time: waits for 'drain' whenever the socket's
 * buffer is full (so a slow or stalled reader holds one piece, not the answer), yields the loop
 * once TURN_BYTES are written, and stops when the connection closes, returning the pieces' iterator
 * (what it holds is let go). That share is spent across 'drain's and renewed only by the yield
 * (YieldBudget): a write the kernel takes at once emits 'drain' from process.nextTick, so a fast
 * reader's drains would otherwise chain without ever returning to the loop, and four of them held
 * it for hundreds of ms at 1M books.
 *
 * Two bounds end it early. A reader that takes nothing is cut by the connection's send timeout
 * (ConnectionGuard). One that takes a little now and then would keep that timeout at bay forever,
 * and its answer with it; so the answer must keep up with the progress floor, checked by one
 * timer set for the moment what has been sent would fall behind it (a reader well above the floor
 * makes it fire rarely). `ended` is told when the answer closes: whether it finished (its last
 * byte handed to the socket) or was cut. HEAD sends the headers alone.
 */
export function sendPiecewise(res: ServerResponse, body: PiecewiseBody, { floor, logger }: PiecewiseSettings, ended: (finished: boolean) => void): void {
  const started = performance.now();
  let sent = 0;
  let chunks: Iterator<BodyPiece> | undefined;
  let ahead: IteratorResult<BodyPiece> = { done: true, value: undefined };
  const turn = YieldBudget.counted(TURN_BYTES);
  let timer: NodeJS.Timeout | undefined;
  const write = (): void => {
    while (chunks !== undefined && ahead.done !== true) {
      if (turn.spent) {
        turn.onNextTurn(write);
        return;
      }
      const { text, bytes } = ahead.value;
      ahead = chunks.next();
      sent += bytes;
      if (ahead.done === true) {
        chunks = undefined;
        res.end(text);
        return;
      }
      turn.spend(bytes);
      if (!res.write(text)) {
        res.once('drain', write);
        return;
      }
    }
    if (chunks !== undefined) res.end();
  };
  const cut = (why: string): void => {
    if (res.destroyed) return;
    logger.warn(`connection closed: ${why}`, { sentBytes: sent, lengthBytes: body.size, elapsedMs: Math.round(performance.now() - started) });
    res.destroy();
  };
  const keepingUp = (): void => {
    const wait = started + floor.graceMs + (sent * 1000) / floor.minBytesPerSecond - performance.now();
    if (wait > 0) timer = setTimeout(keepingUp, wait).unref();
    else cut(`its streamed answer fell more than ${floor.graceMs} ms behind ${floor.minBytesPerSecond} bytes per second`);
  };
  let over = false;
  const close = (): void => {
    if (over) return;
    over = true;
    res.off('close', close);
    res.req.off('close', close);
    clearTimeout(timer);
    res.off('drain', write);
    const open = chunks;
    chunks = undefined;
    open?.return?.();
    ended(res.writableFinished);
  };
  res.once('close', close);
  // An answer queued behind another on its connection (pipelining) gets no 'close' of its own if
  // the connection closes first; its request does. Without it, what the pieces hold would stay.
  res.req.once('close', close);
  if (res.destroyed || res.req.destroyed) {
    close();
    return;
  }
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  chunks = body.chunks({ sent: () => sent, cut });
  // One piece ahead, so the last goes out with `end`: a small body is then one write, as before.
  ahead = chunks.next();
  timer = setTimeout(keepingUp, floor.graceMs).unref();
  write();
}
