import type { Pool, PoolClient } from 'pg';

/** Thrown when the connection a transaction ran on was lost before the transaction ended. */
export class ConnectionLostError extends Error {
  /** After COMMIT was sent, the loss leaves the outcome unknown, and the message says so. */
  constructor(cause: unknown, { afterCommit = false } = {}) {
    const when = afterCommit ? ' after COMMIT was sent, so the write may have committed (the feed shows it if it did)' : '';
    super(`the connection to PostgreSQL was lost${when}: ${(cause as Error | undefined)?.message ?? String(cause)}`, { cause });
    this.name = 'ConnectionLostError';
  }
}

/**
 * Runs `use` on a connection checked out of `pool` (`use` begins and commits its own transaction).
 *
 * While a connection is checked out, node-postgres reports its loss as an `'error'` event on the
 * client, which Node throws when nothing listens: the process would exit on a database restart.
 * This listens for as long as the connection is held. A failure rolls back what `use` began (a
 * connection the ROLLBACK fails on is closed, not given back to the pool); when the connection was
 * lost (that event, or the server's FATAL answer that ends a session, as `pg_terminate_backend`
 * and a shutdown send) it is closed and the failure thrown as ConnectionLostError.
 */
export async function withConnection<T>(pool: Pool, use: (client: PoolClient) => Promise<T>): Promise<T> {
  const held = await checkOut(pool);
  const { client } = held;
  // Whether the connection goes back to the pool: not one that failed mid-transaction, unless a
  // ROLLBACK brought it back to a known state.
  let reusable = true;
  try {
    return await use(client);
  } catch (err) {
    const lost = held.dropped !== undefined || endsSession(err);
    reusable = !lost && (await client.query('ROLLBACK').then(
      () => true,
      () => false,
    ));
    throw lost ? new ConnectionLostError(err) : err;
  } finally {
    client.off('error', held.onError);
    client.release(!reusable);
  }
}

interface Held {
  client: PoolClient;
  dropped: unknown;
  onError: (err: Error) => void;
}

/**
 * A connection from the pool, listened to from the moment the pool hands it over: the pool calls
 * back in the same turn as it stops listening itself, while a promise would resume a turn later,
 * and a new connection may already hold the server's FATAL in the bytes it is reading.
 */
function checkOut(pool: Pool): Promise<Held> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client) => {
      if (client === undefined) {
        reject(err);
        return;
      }
      const held: Held = {
        client,
        dropped: undefined,
        onError: (cause) => {
          held.dropped ??= cause;
        },
      };
      client.on('error', held.onError);
      resolve(held);
    });
  });
}

/** An error the server sends as it ends the session (severity FATAL or PANIC). */
function endsSession(err: unknown): boolean {
  const severity = (err as { severity?: unknown } | null)?.severity;
  return severity === 'FATAL' || severity === 'PANIC';
}
