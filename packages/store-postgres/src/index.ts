/**
 * The book catalogue's store on PostgreSQL: `openPostgresStore(url)` opens what the service's
 * STORE_URL names. The service loads this package only when STORE_URL names PostgreSQL, so the
 * core keeps no dependency on it (README.md beside this file; docs/scaling-out.md in the core).
 */
import { silentLogger, type DurableBookStore, type Logger, type MemoryBudget, type Registry } from 'book-catalogue';
import { NO_STORE_OBSERVER, type StoreObserver } from 'book-catalogue/store-kit';
import pg from 'pg';
import { Follower } from './follower.ts';
import { Mirror } from './mirror.ts';
import { poolMetrics } from './pool-metrics.ts';
import { PostgresBookStore } from './postgres-store.ts';
import { ensureSchema } from './schema.ts';
import { SeqBarrier } from './seq-barrier.ts';
import { CONNECT_TIMEOUT_MS } from './timeouts.ts';
import { Writer } from './writer.ts';

export { readDump, writeDump } from './catalogue-copy.ts';

/** Connections per process unless PostgresStoreOptions.poolSize says otherwise. */
export const DEFAULT_POOL_SIZE = 10;

export interface PostgresStoreOptions {
  logger?: Logger;
  /** Told of every commit and failed write (the service's metrics). */
  observer?: StoreObserver;
  /** What the feed's changes beyond the last 10,000 are charged to (never many: the database holds them). */
  memoryBudget?: MemoryBudget;
  /** Where the pool and query families go (`createMetrics().registry`). */
  registry?: Registry;
  /** Connections of this process's pool (PG_POOL_SIZE); the feed's listening connection is one more. */
  poolSize?: number;
}

/**
 * The URL as logs may show it: the password replaced, wherever node-postgres would read one. It
 * parses with the WHATWG URL parser, which drops tabs and newlines anywhere, ends the user part at
 * the last `@` (so a password may hold a raw `@`, or a `/` or `?`, which fail the parse) and
 * decodes `%xx` in parameter names, all of which it reads as settings. So the value of every
 * parameter whose decoded name holds `password` (`password`, `sslpassword`) is replaced, and so is
 * everything from the user name's `:` to the last `@` (which hides more than the password when an
 * `@` follows it, in the query or in a password that failed the parse).
 */
export function redactedUrl(url: string): string {
  const plain = url.replace(/[\t\n\r]/g, '');
  const userStart = plain.indexOf('://') + 3;
  // Parameters first: the user part's replacement moves what follows it.
  const shown = hideParams(plain, plain.indexOf('?', userStart));
  const colon = shown.indexOf(':', userStart);
  const at = shown.lastIndexOf('@');
  return userStart >= 3 && colon !== -1 && colon < at ? `${shown.slice(0, colon + 1)}***${shown.slice(at)}` : shown;
}

/**
 * `url` with the value of every parameter after `query` (the `?`) whose decoded name holds
 * `password` replaced. A `#` ends the parameters for the parser, but a password holding a raw `#`
 * would go on past it: a replaced value runs to the end of the URL.
 */
function hideParams(url: string, query: number): string {
  if (query === -1) return url;
  const params = url
    .slice(query + 1)
    .split('&')
    .map((param) => {
      const name = param.split('=', 1)[0] as string;
      return /password/i.test(percentDecoded(name)) ? `${name}=***` : param;
    });
  return `${url.slice(0, query + 1)}${params.join('&')}`;
}

/** `%xx` decoded as URLSearchParams decodes names, enough to compare with an ASCII name. */
function percentDecoded(text: string): string {
  return text.replace(/\+/g, ' ').replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * Connects, creates the tables when missing, loads the catalogue into memory and starts following
 * its changes. Rejects (nothing left open) when the database cannot be reached or refuses.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<DurableBookStore> {
  const logger = options.logger ?? silentLogger;
  const connection: pg.ClientConfig = { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, application_name: 'book-catalogue' };
  const pool = new pg.Pool({ ...connection, max: options.poolSize ?? DEFAULT_POOL_SIZE });
  // An idle connection the server closed (a restart): logged, and the pool opens another when needed.
  pool.on('error', (err) => logger.warn('a pooled PostgreSQL connection failed', { err }));
  let follower: Follower | undefined;
  try {
    await ensureSchema(pool);
    const onListenerError = (err: unknown): void => logger.error('a change feed listener threw; it was unsubscribed', { err: err as Error });
    const mirror = await Mirror.load(pool, onListenerError, options.memoryBudget);
    let store: PostgresBookStore | undefined;
    const listening = (): boolean => follower?.listening ?? false;
    const timer = poolMetrics(options.registry, pool, listening);
    follower = new Follower({ connection, pool, mirror, logger, timer, lost: (err) => store?.lose(err) });
    await follower.start();
    const observer = options.observer ?? NO_STORE_OBSERVER;
    const writer = new Writer({ pool, follower, logger, observer, timer });
    store = new PostgresBookStore({ location: redactedUrl(url), pool, mirror, follower, writer, barrier: new SeqBarrier(pool, timer), logger });
    observer.opened(store);
    return store;
  } catch (err) {
    await follower?.close();
    await pool.end().catch(() => {});
    throw err;
  }
}
