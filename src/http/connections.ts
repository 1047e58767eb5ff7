import type { Server } from 'node:net';
import type { Logger } from '../log.ts';

/** A flood of refused connections writes at most one log line per this many milliseconds. */
export const REFUSED_LOG_INTERVAL_MS = 10_000;

/** Connection events, for metrics (`CatalogueMetrics.connections`). */
export interface ConnectionEvents {
  opened(): void;
  closed(): void;
  /** Refused by the connection cap. */
  rejected(): void;
}

export interface ConnectionWatchOptions {
  logger: Logger;
  now: () => number;
  maxConnections: number;
  events: ConnectionEvents | undefined;
}

/**
 * Node closes connections past `maxConnections` silently ('drop'); an operator must hear of it.
 * The first refusal is logged at once, then at most one line per REFUSED_LOG_INTERVAL_MS saying
 * how many were refused since the last line, so a flood cannot flood the log.
 */
export function watchConnections(server: Server, { logger, now, maxConnections, events }: ConnectionWatchOptions): void {
  let lastLine = -Infinity;
  let unreported = 0;
  server.on('drop', () => {
    events?.rejected();
    unreported++;
    const at = now();
    if (at - lastLine < REFUSED_LOG_INTERVAL_MS) return;
    logger.warn('connections refused: MAX_CONNECTIONS are open', { refused: unreported, maxConnections });
    lastLine = at;
    unreported = 0;
  });
  if (events === undefined) return;
  server.on('connection', (socket: NodeJS.EventEmitter) => {
    events.opened();
    socket.once('close', () => events.closed());
  });
}
