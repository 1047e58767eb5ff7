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
import { Writer } from './writer.ts';

export { readDump, writeDump } from './catalogue-copy.ts';

/** Connections per process unless PostgresStoreOptions.poolSize says otherwise. */
export const DEFAULT_POOL_SIZE = 10;
/** How long a query waits for a connection (the database unreachable) before it fails. */
const CONNECT_TIMEOUT_MS = 3000;

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
 * the last `@` (so a password may hold a raw `@`, or a `/`, which fails the parse, and the URL is
 * then shown in the error) and decodes `%xx` in parameter names, all of which it reads as
 * settings. So everything from the user name's `:` to the last `@` is replaced (which hides a host
 * after an `@` in the query too), and so is the value of every parameter whose decoded name holds
 * `password` (`password`, `sslpassword`).
 */
export function redactedUrl(url: string): string {
  const plain = url.replace(/[\t\n\r]/g, '');
  const userStart = plain.indexOf('://') + 3;
  const colon = plain.indexOf(':', userStart);
  const at = plain.lastIndexOf('@');
  const shown = userStart >= 3 && colon !== -1 && colon < at ? `${plain.slice(0, colon + 1)}***${plain.slice(at)}` : plain;
  const query = shown.indexOf('?', Math.max(at, userStart));
  if (query === -1) return shown;
  const fragment = shown.indexOf('#', query);
  const end = fragment === -1 ? shown.length : fragment;
  const params = shown
    .slice(query + 1, end)
    .split('&')
    .map((param) => {
      const name = param.split('=', 1)[0] as string;
      return /password/i.test(percentDecoded(name)) ? `${name}=***` : param;
    });
  return `${shown.slice(0, query + 1)}${params.join('&')}${shown.slice(end)}`;
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
