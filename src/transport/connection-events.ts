import type { Server } from 'node:net';
import type { Logger, LogFields } from '../log.ts';

/** A flood of refused connections writes at most one log line per this many milliseconds. */
export const REFUSED_LOG_INTERVAL_MS = 10_000;

/**
 * Why a connection was closed on arrival: `max_connections`, MAX_CONNECTIONS are open;
 * `per_address`, its client address has MAX_CONNECTIONS_PER_ADDRESS open.
 */
export type RefusalReason = 'max_connections' | 'per_address';

/** Connection events, for metrics (`CatalogueMetrics.connections`). */
export interface ConnectionEvents {
  opened(): void;
  closed(): void;
  /** Closed on arrival by a connection cap. */
  rejected(reason: RefusalReason): void;
}

export interface ConnectionWatchOptions {
  logger: Logger;
  now: () => number;
  maxConnections: number;
  events: ConnectionEvents | undefined;
}

/**
 * A warning an operator must hear of, that a flood must not turn into a flood of lines: the first
 * at once, then at most one per REFUSED_LOG_INTERVAL_MS saying how many happened since the last.
 */
export function throttledWarning(logger: Logger, now: () => number, message: string, fields: LogFields): (latest?: LogFields) => void {
  let lastLine = -Infinity;
  let unreported = 0;
  return (latest) => {
    unreported++;
    const at = now();
    if (at - lastLine < REFUSED_LOG_INTERVAL_MS) return;
    logger.warn(message, { ...fields, ...latest, refused: unreported });
    lastLine = at;
    unreported = 0;
  };
}

/** Node closes connections past `maxConnections` silently ('drop'); an operator must hear of it. */
export function watchConnections(server: Server, { logger, now, maxConnections, events }: ConnectionWatchOptions): void {
  const warn = throttledWarning(logger, now, 'connections refused: MAX_CONNECTIONS are open', { maxConnections });
  server.on('drop', () => {
    events?.rejected('max_connections');
    warn();
  });
  // Once listening, Node reports a failed accept (EMFILE past libuv's reserve descriptor, ENOBUFS)
  // as the server's 'error', which would exit the process unheard; the server keeps listening.
  // Before, an 'error' is listen()'s to report (EADDRINUSE), so the listener is on only between.
  const acceptFailed = throttledWarning(logger, now, 'accepting a connection failed; still listening', {});
  const onAcceptError = (err: Error): void => acceptFailed({ err });
  server.on('listening', () => server.on('error', onAcceptError));
  server.on('close', () => server.off('error', onAcceptError));
  if (events === undefined) return;
  server.on('connection', (socket: NodeJS.EventEmitter) => {
    events.opened();
    socket.once('close', () => events.closed());
  });
}
