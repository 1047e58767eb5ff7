import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Counts event-loop turns from now until the returned function is called, which stops counting
 * and returns the count: how a test shows that long work yielded to other callbacks.
 */
export function countTurns(): () => number {
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  return () => {
    counting = false;
    return turns;
  };
}

/**
 * Watches the connection of the first request `server` gets that `matches`, from then until the
 * returned function is called: the most bytes written to it between two event-loop turns (a long
 * answer that never yields shows as one large run), and whether a connection was watched at all.
 */
export function mostWrittenPerTurn(server: Server, matches: (req: IncomingMessage) => boolean): () => { watched: boolean; most: number } {
  let socket: Socket | undefined;
  let most = 0;
  let seen = 0;
  const capture = (req: IncomingMessage, res: ServerResponse): void => {
    if (!matches(req) || res.socket === null) return;
    // A kept-alive connection has written earlier answers already.
    socket = res.socket;
    seen = socket.bytesWritten;
  };
  server.on('request', capture);
  let watching = true;
  const turn = (): void => {
    if (socket !== undefined) {
      most = Math.max(most, socket.bytesWritten - seen);
      seen = socket.bytesWritten;
    }
    if (watching) setImmediate(turn);
  };
  setImmediate(turn);
  return () => {
    watching = false;
    server.off('request', capture);
    return { watched: socket !== undefined, most };
  };
}
