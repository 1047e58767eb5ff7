import type { QueryConfig } from 'pg';

/** How long a query waits for a connection (the database unreachable) before it fails. */
export const CONNECT_TIMEOUT_MS = 3000;

/**
 * How long a read waits for the database's answer. A database that does not answer (frozen, or
 * behind a network that drops packets without a reset) would otherwise hold every read: past
 * this, reads answer from memory, as while the database cannot be reached. As long as a
 * connection may take: a read waits at most twice this.
 */
export const READ_TIMEOUT_MS = CONNECT_TIMEOUT_MS;

/** A read's query, failed past READ_TIMEOUT_MS (node-postgres reads `query_timeout` from a query's config too; its types name it only on a client's). */
export function timedRead(text: string, values?: unknown[]): QueryConfig & { query_timeout: number } {
  return { text, ...(values !== undefined && { values }), query_timeout: READ_TIMEOUT_MS };
}
