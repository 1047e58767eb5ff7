/**
 * The book catalogue as a library. Importing it has no side effects: it reads no environment,
 * installs no signal handler, never exits the process and logs only to the logger it is given.
 */
export { createApp, type App, type AppOptions } from './service/app.ts';
export { createServer, type CatalogueServer, type ServerOptions } from './service/create-server.ts';
export { listen, SHUTDOWN_GRACE_MS, type DrainResult } from './transport/http-server.ts';
export { TRANSPORT_LIMITS, type TransportLimits } from './transport/limits.ts';
export { LOOPBACK_HOST_NAMES } from './transport/host-names.ts';
export { MemoryBudget, DEFAULT_MEMORY_BUDGET_BYTES, defaultMemoryBudgetBytes, CONSUMER_KINDS, type Charge, type Consumer, type ConsumerKind } from './memory/budget.ts';
export { openStore, type StoreOptions } from './store/open.ts';
export type { BookStore, DurableBookStore, StoreStats, VersionCondition } from './store/book-store.ts';
export type { FileHandleLike, FileInfo, FileLayer, FileStatus, OpenFlags } from './fs/durable-fs.ts';
export { changeOf, type Change, type ChangeEntry, type ChangeType } from './store/change.ts';
export { RETAINED_CHANGES, type ChangeFeed, type ChangeListener } from './store/change-log.ts';
export type { CompactionOptions } from './store/compaction.ts';
export type { StoreObserver } from './store/observer.ts';
export { createMetrics, type CatalogueMetrics, type AuthObserver, type ConnectionObserver, type TokenRejection } from './metrics/catalogue-metrics.ts';
export { createMetricsServer, METRICS_LIMITS, type MetricsServer, type MetricsServerOptions } from './metrics/listener.ts';
export { Registry, Counter, Gauge, Histogram, type CollectedOptions, type Family, type MetricType, type Sample } from './metrics/registry.ts';
export { EXPOSITION_CONTENT_TYPE } from './metrics/exposition.ts';
export { readCatalogue, writeCatalogue, type Catalogue } from './store/catalogue-file.ts';
export { OPENAPI_DOCUMENT } from './service/openapi-document.ts';
export type { OpenApiDocument } from './http/openapi-types.ts';
export { signToken, verifyToken, TokenError, TOKEN_LIFETIME_SECONDS, type Claims } from './auth/jwt.ts';
export { createLogger, silentLogger, LOG_LEVELS, type Logger, type LogLevel, type LoggerOptions } from './log.ts';
export { parseCommand, type Command, type Config, type ConfigSources } from './cli/config.ts';
export type { Book, BookFields, BookPatch } from './model/book.ts';
export { InvalidBookError } from './model/valid-book.ts';
export { ANSWERS, MESSAGES, HttpError, type Answer, type Message } from './http/messages.ts';
export { ERROR_CODES, ConfigError, DataDirLockedError, DataNotPrivateError, StoreCorruptError, StoreFormatError, StoreUnavailableError, PreconditionFailedError, ChangesUnavailableError, BookIdsExhaustedError, isFault } from './faults.ts';
