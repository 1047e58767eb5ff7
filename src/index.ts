/**
 * The book catalogue as a library. Importing it has no side effects: it reads no environment,
 * installs no signal handler, never exits the process and logs only to the logger it is given.
 */
export { createApp, type App, type AppOptions } from './http/app.ts';
export { createServer, listen, SHUTDOWN_GRACE_MS, TRANSPORT_LIMITS, type CatalogueServer, type DrainResult, type ServerOptions, type TransportLimits } from './http/server.ts';
export { openStore, type StoreOptions } from './store/open.ts';
export type { BookStore, DurableBookStore, StoreStats } from './store/store.ts';
export { changeOf, type Change, type ChangeEntry, type ChangeType } from './events/change.ts';
export { RETAINED_CHANGES, type ChangeFeed, type ChangeListener } from './events/change-log.ts';
export type { FileHandleLike, FileLayer } from './store/durable-fs.ts';
export type { CompactionOptions } from './store/compaction.ts';
export type { StoreObserver } from './store/observer.ts';
export { createMetrics, type CatalogueMetrics, type AuthObserver, type ConnectionObserver, type TokenRejection } from './metrics/catalogue-metrics.ts';
export { createMetricsServer } from './metrics/listener.ts';
export { Registry, Counter, Gauge, Histogram, type CollectedOptions, type Family, type MetricType, type Sample } from './metrics/registry.ts';
export { EXPOSITION_CONTENT_TYPE } from './metrics/exposition.ts';
export { readCatalogue, writeCatalogue, type Catalogue } from './store/catalogue-file.ts';
export { OPENAPI_DOCUMENT } from './http/openapi.ts';
export type { OpenApiDocument } from './http/openapi-types.ts';
export { signToken, verifyToken, TokenError, TOKEN_LIFETIME_SECONDS, type Claims } from './auth/jwt.ts';
export { createLogger, silentLogger, LOG_LEVELS, type Logger, type LogLevel, type LoggerOptions } from './log.ts';
export { parseCommand, type Command, type Config, type ConfigSources } from './config.ts';
export type { Book, BookFields, BookPatch } from './books/model.ts';
export {
  MESSAGES,
  ERROR_CODES,
  HttpError,
  ConfigError,
  DataDirLockedError,
  StoreCorruptError,
  StoreUnavailableError,
  PreconditionFailedError,
  ChangesUnavailableError,
  type Message,
} from './errors.ts';
