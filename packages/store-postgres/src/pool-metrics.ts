import type { Registry } from 'book-catalogue';
import type { Pool } from 'pg';

/** What the store's queries are, as the duration histogram's `query` label: a fixed set. */
export type QueryName = 'write' | 'commit' | 'seq' | 'changes' | 'load';

/** Seconds: from a pooled round trip on one host to a commit waiting for a slow disk. */
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Times the store's queries, into the registry's histogram when there is one. */
export interface QueryTimer {
  time<T>(query: QueryName, run: () => Promise<T>): Promise<T>;
}

/**
 * The pool and query families (docs/scaling-out.md, "Metrics"), when the service has metrics:
 * `book_catalogue_pg_pool_connections{state}` (idle, busy), `book_catalogue_pg_pool_waiting`
 * (queries waiting for a connection), `book_catalogue_pg_listening` (1 while the feed's
 * connection listens) and `book_catalogue_pg_query_duration_seconds{query}`.
 */
export function poolMetrics(registry: Registry | undefined, pool: Pool, listening: () => boolean): QueryTimer {
  if (registry === undefined) return { time: (_query, run) => run() };
  registry.collect({
    name: 'book_catalogue_pg_pool_connections',
    help: 'Connections of the PostgreSQL pool, by state.',
    type: 'gauge',
    labelNames: ['state'],
    read: () => [
      { labels: ['idle'], value: pool.idleCount },
      { labels: ['busy'], value: pool.totalCount - pool.idleCount },
    ],
  });
  registry.collect({ name: 'book_catalogue_pg_pool_waiting', help: 'Queries waiting for a connection of the PostgreSQL pool.', type: 'gauge', read: () => pool.waitingCount });
  registry.collect({ name: 'book_catalogue_pg_listening', help: '1 while the connection that follows the change feed listens, else 0 (the database is unreachable).', type: 'gauge', read: () => (listening() ? 1 : 0) });
  const durations = registry.histogram('book_catalogue_pg_query_duration_seconds', 'Time PostgreSQL queries took, by what they do, in seconds.', QUERY_BUCKETS, ['query']);
  const children = new Map((['write', 'commit', 'seq', 'changes', 'load'] as const).map((q) => [q, durations.labels(q)]));
  return {
    async time(query, run) {
      const start = performance.now();
      try {
        return await run();
      } finally {
        children.get(query)?.observe((performance.now() - start) / 1000);
      }
    },
  };
}
