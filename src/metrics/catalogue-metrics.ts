import type { RefusalReason } from '../transport/connection-events.ts';
import type { StoreObserver } from '../store/observer.ts';
import type { DurableBookStore } from '../store/book-store.ts';
import { CONSUMER_KINDS, type MemoryBudget } from '../memory/budget.ts';
import { packageVersion } from '../version.ts';
import { registerProcessMetrics } from './process-metrics.ts';
import { Registry, type CounterChild, type GaugeChild } from './registry.ts';
import { RequestMetrics } from './request-metrics.ts';

/**
 * Why a protected request's token was refused: a small fixed set, so the label stays bounded. The
 * authorizer reports its own union of these (auth/authorize.ts); the composition root hands it
 * `tokenRejected`, so a reason this set lacks fails to compile there.
 */
const TOKEN_REJECTIONS = ['missing', 'malformed', 'bad_signature', 'expired', 'not_yet_valid'] as const;
export type TokenRejection = (typeof TOKEN_REJECTIONS)[number];

/** Seconds: from a cached read to a stalled disk. */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const FSYNC_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const RECORD_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
const COMPACTION_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Login and token events, as the auth routes report them. */
export interface AuthObserver {
  loginFailed(): void;
  loginThrottled(): void;
  /** A property, not a method, so that its parameter is checked strictly where it is handed on. */
  tokenRejected: (reason: TokenRejection) => void;
}

/** Connection events of the public listener. */
export interface ConnectionObserver {
  opened(): void;
  closed(): void;
  /** Closed on arrival by MAX_CONNECTIONS (`max_connections`) or MAX_CONNECTIONS_PER_ADDRESS (`per_address`). */
  rejected(reason: RefusalReason): void;
}

/**
 * The service's metrics: one registry with every family, and the hooks the store, the app and the
 * server report to. Create one per service; pass `storeObserver` to `openStore` and the whole
 * object to `createApp`/`createServer` as `metrics`; serve `registry.expose()` (see
 * `createMetricsServer`). `close()` stops the event-loop delay monitor.
 */
export interface CatalogueMetrics {
  readonly registry: Registry;
  /** For `openStore(dir, { observer })`. */
  readonly storeObserver: StoreObserver;
  readonly requests: RequestMetrics;
  readonly auth: AuthObserver;
  readonly connections: ConnectionObserver;
  /** Reads `book_catalogue_event_streams` (open change-feed streams) from here at every scrape. */
  watchEventStreams(count: () => number): void;
  /** Reads the memory budget's limit, what each kind of consumer holds, and how many were shed, at every scrape. */
  watchMemoryBudget(budget: MemoryBudget): void;
  close(): void;
}

function storeFamilies(registry: Registry, current: () => DurableBookStore | undefined): void {
  const read = (pick: (store: DurableBookStore) => number) => () => {
    const store = current();
    return store === undefined ? [] : [{ labels: [], value: pick(store) }];
  };
  registry.collect({ name: 'book_catalogue_books', help: 'Books in the catalogue.', type: 'gauge', read: read((s) => s.size) });
  registry.collect({ name: 'book_catalogue_journal_bytes', help: 'Bytes of durable records in the journal files.', type: 'gauge', read: read((s) => s.stats.journalBytes) });
  registry.collect({ name: 'book_catalogue_snapshot_bytes', help: 'Size of the last durable snapshot, in bytes.', type: 'gauge', read: read((s) => s.stats.snapshotBytes) });
  registry.collect({ name: 'book_catalogue_commits_total', help: 'Group commits made durable (one write and one fdatasync each).', type: 'counter', read: read((s) => s.stats.batches) });
  registry.collect({ name: 'book_catalogue_compactions_total', help: 'Compactions of the journal into a snapshot that finished.', type: 'counter', read: read((s) => s.stats.compactions) });
}

function createStoreObserver(registry: Registry): StoreObserver {
  let store: DurableBookStore | undefined;
  storeFamilies(registry, () => store);
  const records = registry.histogram('book_catalogue_commit_records', 'Journal records written per group commit.', RECORD_BUCKETS).labels();
  const fsync = registry.histogram('book_catalogue_fsync_duration_seconds', 'Time the journal fdatasync of a group commit took, in seconds.', FSYNC_BUCKETS).labels();
  const failures = registry.counter('book_catalogue_write_failures_total', 'Journal writes or fdatasyncs that failed (their changes were refused).').labels();
  const compaction = registry.histogram('book_catalogue_compaction_duration_seconds', 'Time a compaction took, from journal rotation to durable snapshot, in seconds.', COMPACTION_BUCKETS).labels();
  const compactionFailures = registry.counter('book_catalogue_compaction_failures_total', 'Compactions that failed (the journal kept every change; the next attempt waits).').labels();
  return {
    opened: (opened) => {
      store = opened;
    },
    committed: (n, seconds) => {
      records.observe(n);
      fsync.observe(seconds);
    },
    writeFailed: () => failures.inc(),
    compacted: (seconds) => compaction.observe(seconds),
    compactionFailed: () => compactionFailures.inc(),
  };
}

function createAuthObserver(registry: Registry): AuthObserver {
  const failed = registry.counter('book_catalogue_login_failures_total', 'Logins refused with Invalid credentials.').labels();
  const throttled = registry.counter('book_catalogue_logins_throttled_total', 'Logins refused with 429 because the address failed too often.').labels();
  const rejected = registry.counter('book_catalogue_tokens_rejected_total', 'Requests to protected routes refused with 401, by reason.', ['reason']);
  const byReason = new Map<TokenRejection, CounterChild>();
  for (const reason of TOKEN_REJECTIONS) byReason.set(reason, rejected.labels(reason));
  return {
    loginFailed: () => failed.inc(),
    loginThrottled: () => throttled.inc(),
    tokenRejected: (reason) => (byReason.get(reason) as CounterChild).inc(),
  };
}

function createConnectionObserver(registry: Registry): ConnectionObserver {
  const rejected = registry.counter(
    'book_catalogue_connections_rejected_total',
    'Connections closed on arrival, by reason: MAX_CONNECTIONS were open (max_connections), or MAX_CONNECTIONS_PER_ADDRESS from their address (per_address).',
    ['reason'],
  );
  const byReason: Readonly<Record<RefusalReason, CounterChild>> = { max_connections: rejected.labels('max_connections'), per_address: rejected.labels('per_address') };
  const open: GaugeChild = registry.gauge('book_catalogue_open_connections', 'Connections open on the public listener.').labels();
  return { opened: () => open.inc(), closed: () => open.dec(), rejected: (reason) => byReason[reason].inc() };
}

/** The budget's families: read at scrape time, so a report to the budget costs nothing more. */
function memoryFamilies(registry: Registry, budget: () => MemoryBudget): void {
  const byKind = (pick: (b: MemoryBudget, kind: (typeof CONSUMER_KINDS)[number]) => number) => () =>
    CONSUMER_KINDS.map((kind) => ({ labels: [kind], value: pick(budget(), kind) }));
  registry.collect({ name: 'book_catalogue_memory_budget_bytes', help: 'The memory budget: bytes clients may make the process hold beyond the catalogue (MEMORY_BUDGET_MB).', type: 'gauge', read: () => budget().limit });
  registry.collect({ name: 'book_catalogue_memory_held_bytes', help: 'Bytes held on clients\' behalf now, by consumer (SECURITY.md, "Memory budget").', type: 'gauge', labelNames: ['consumer'], read: byKind((b, kind) => b.heldBy(kind)) });
  registry.collect({ name: 'book_catalogue_memory_shed_total', help: 'Consumers cut because the memory budget was spent, by consumer.', type: 'counter', labelNames: ['consumer'], read: byKind((b, kind) => b.shedCount(kind)) });
}

/** Every family the service exposes (docs/operations.md's metrics table lists them; test/readme.test.ts holds it to that), ready to report to. */
export function createMetrics(): CatalogueMetrics {
  const registry = new Registry();
  const requests = new RequestMetrics(
    registry.counter('http_requests_total', 'HTTP requests answered, by method, route pattern and status.', ['method', 'route', 'status']),
    registry.histogram('http_request_duration_seconds', 'Time from the arrival of a request to the last byte of its answer handed to the socket, or to the cut of a streamed answer (GET /books in full), in seconds; for GET /events, to its stream\'s head.', REQUEST_BUCKETS, ['method', 'route']),
  );
  const storeObserver = createStoreObserver(registry);
  const auth = createAuthObserver(registry);
  const connections = createConnectionObserver(registry);
  let streams: (() => number) | undefined;
  let budget: MemoryBudget | undefined;
  const stopProcess = registerProcessMetrics(registry, { version: packageVersion() });
  return {
    registry,
    storeObserver,
    requests,
    auth,
    connections,
    watchEventStreams(count) {
      if (streams === undefined) {
        registry.collect({ name: 'book_catalogue_event_streams', help: 'Change-feed (GET /events) streams open.', type: 'gauge', read: () => (streams as () => number)() });
      }
      streams = count;
    },
    watchMemoryBudget(watched) {
      if (budget === undefined) memoryFamilies(registry, () => budget as MemoryBudget);
      budget = watched;
    },
    close: stopProcess,
  };
}
