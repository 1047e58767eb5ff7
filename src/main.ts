#!/usr/bin/env node
/**
 * The command line: the only module that reads argv, the environment and `.env`, installs signal
 * handlers and sets the exit code.
 */
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { basename, resolve } from 'node:path';
import { loadOrCreateSecret, PASSWORD_FILE, SECRET_FILE } from './auth/secrets.ts';
import { runBackupCommand } from './cli/backup.ts';
import { runMoveCommand } from './cli/move.ts';
import { loadPostgresStore, StorePackageMissingError } from './cli/store-package.ts';
import { malformedDotenvLines } from './cli/dotenv-lines.ts';
import { readTlsFiles } from './cli/tls-files.ts';
import { parseCommand, USAGE, type Config } from './cli/config.ts';
import { ConfigError, DataDirLockedError, StoreCorruptError, StoreFormatError } from './faults.ts';
import { isNotFound } from './fs/durable-fs.ts';
import { defaultAllowedHosts } from './transport/host-names.ts';
import { listen, SHUTDOWN_GRACE_MS } from './transport/http-server.ts';
import { batchLines, createLogger, type Logger } from './log.ts';
import { defaultMemoryBudgetBytes, MemoryBudget } from './memory/budget.ts';
import { createMetrics, type CatalogueMetrics } from './metrics/catalogue-metrics.ts';
import { createMetricsServer } from './metrics/listener.ts';
import { createServer, type CatalogueServer } from './service/create-server.ts';
import type { BookStore } from './store/book-store.ts';
import type { StoreObserver } from './store/observer.ts';
import { openStore } from './store/open.ts';
import { UiNotBuiltError } from './ui/assets.ts';
import { packageVersion } from './version.ts';

/** RFC 7518 §3.2: an HS256 key shorter than the hash output weakens it. */
const MIN_SECRET_BYTES = 32;

function fatal(message: string): void {
  process.stderr.write(`book-catalogue: ${message}\n`);
  process.exitCode = 1;
}

function readDotenv(): string | undefined {
  try {
    return readFileSync('.env', 'utf8');
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw new ConfigError(`cannot read .env: ${(err as Error).message}`);
  }
}

/** A startup step that failed, carrying the one line to print; serve closes the store first. */
class StartupError extends Error {}

/** The signing secret and the password; `generated`: the password's file when this start made it. */
interface Secrets {
  secret: string;
  password: string;
  generated: string | undefined;
}

async function resolveSecrets(config: Config, dataDir: string, logger: Logger): Promise<Secrets> {
  try {
    return { secret: await signingSecret(config, dataDir, logger), ...(await loginPassword(config, dataDir)) };
  } catch (err) {
    throw new StartupError(`cannot keep generated secrets in ${dataDir}: ${(err as Error).message}`);
  }
}

async function signingSecret(config: Config, dataDir: string, logger: Logger): Promise<string> {
  const secret = config.secretToken;
  if (secret === undefined) {
    const stored = await loadOrCreateSecret(dataDir, SECRET_FILE, 32);
    // The designed default, not a fault: nothing for a person to act on, so not a warning.
    logger.debug('SECRET_TOKEN is not set: using the generated secret kept in the data directory', { file: stored.path });
    return stored.value;
  }
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    logger.warn(`SECRET_TOKEN is shorter than ${MIN_SECRET_BYTES} bytes; HS256 wants at least that (RFC 7518 section 3.2)`);
  }
  return secret;
}

async function loginPassword(config: Config, dataDir: string): Promise<Pick<Secrets, 'password' | 'generated'>> {
  if (config.password !== undefined) return { password: config.password, generated: undefined };
  const stored = await loadOrCreateSecret(dataDir, PASSWORD_FILE, 18);
  return { password: stored.value, generated: stored.created ? stored.path : undefined };
}

/**
 * docs/contract.md, "Configuration": a generated password is printed once, on the first start that
 * serves with it, whatever the log level; on stderr, so that stdout holds JSON log lines only.
 */
function showGeneratedPassword(username: string, password: string, file: string): void {
  process.stderr.write(
    `Generated a password for user "${username}": ${password}\n` +
      `It is stored in ${file} (mode 0600) and will not be shown again.\n` +
      `Set AUTH_PASSWORD (and AUTH_USERNAME) to use your own.\n\n`,
  );
}

/** JSON log lines on stdout, batched; flushed on exit. */
function startLogger(level: Config['logLevel']): Logger {
  // A log reader that went away (EPIPE) must not take the service down with it; other errors still do.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
  const lines = batchLines((chunk) => process.stdout.write(chunk));
  // process.exit (a second signal) skips the pending turn; stdout to a file or pipe is synchronous here.
  process.on('exit', () => lines.flush());
  return createLogger({ level, write: lines.write });
}

/**
 * The store never drops damaged records by itself (they may hold acknowledged changes), so the one
 * line says what the operator can do: a journal can be cut at the damaged byte, keeping every change
 * before it; a damaged snapshot can only be restored.
 */
function withAdvice(err: StoreCorruptError): string {
  if (err instanceof StoreFormatError) return `${err.message}. Nothing was changed; run the release that wrote it, or a later one (docs/storage.md, "File formats")`;
  const next = basename(err.file).startsWith('journal-')
    ? `restore the data directory from a backup, or keep every change before that byte by cutting the file there (truncate -s ${err.offset} ${err.file}), losing the changes after it`
    : 'restore the data directory from a backup';
  return `${err.message}. Nothing was changed; ${next} (docs/storage.md, "Recovery")`;
}

/** The catalogue STORE_URL names, through the PostgreSQL store's package; `location` is what the startup line shows. */
async function openPostgres(config: Config, logger: Logger, metrics: CatalogueMetrics | undefined, memoryBudget: MemoryBudget): Promise<{ store: BookStore; location: string }> {
  const { url, poolSize } = config.store as NonNullable<Config['store']>;
  let pg;
  try {
    pg = await loadPostgresStore();
  } catch (err) {
    throw new StartupError(err instanceof StorePackageMissingError ? err.message : `cannot load the PostgreSQL store: ${(err as Error).message}`);
  }
  const location = pg.redactedUrl(url);
  // Tokens and logins are checked by every process: generated ones are per data directory.
  if (config.secretToken === undefined || config.password === undefined) {
    logger.warn('STORE_URL is set but SECRET_TOKEN or AUTH_PASSWORD is not: the generated ones are kept per data directory, so every process serving this catalogue must share one, or tokens from one are refused by another (docs/scaling-out.md)');
  }
  try {
    const store = await pg.openPostgresStore(url, { logger, memoryBudget, poolSize, ...(metrics !== undefined && { observer: metrics.storeObserver, registry: metrics.registry }) });
    return { store, location };
  } catch (err) {
    throw new StartupError(`cannot open the catalogue in PostgreSQL at ${location}: ${(err as Error).message}`);
  }
}

async function openDataDir(dataDir: string, logger: Logger, observer: StoreObserver | undefined, memoryBudget: MemoryBudget, journalCompactBytes: number | undefined): Promise<BookStore> {
  try {
    return await openStore(dataDir, {
      logger,
      memoryBudget,
      ...(observer !== undefined && { observer }),
      ...(journalCompactBytes !== undefined && { compaction: { minBytes: journalCompactBytes } }),
    });
  } catch (err) {
    if (err instanceof StoreCorruptError) throw new StartupError(withAdvice(err));
    if (err instanceof DataDirLockedError) throw new StartupError(err.message);
    throw new StartupError(`cannot open data directory ${dataDir}: ${(err as Error).message}`);
  }
}

/** docs/contract.md, "Host names": undefined accepts any host. */
function withAllowedHosts(hosts: string[] | undefined): { allowedHosts?: string[] } {
  return hosts === undefined ? {} : { allowedHosts: hosts };
}

interface Running {
  server: CatalogueServer;
  address: AddressInfo;
}

async function startServer(
  config: Config,
  store: BookStore,
  dataDir: string,
  tls: ReturnType<typeof readTlsFiles> | undefined,
  logger: Logger,
  metrics: CatalogueMetrics | undefined,
  memoryBudget: MemoryBudget,
): Promise<Running> {
  const secrets = await resolveSecrets(config, dataDir, logger);
  let server;
  try {
    server = createServer({
      store,
      secret: secrets.secret,
      username: config.username,
      password: secrets.password,
      loginMaxFailures: config.loginMaxFailures,
      logger,
      ...(config.secretTokenPrevious !== undefined && { previousSecret: config.secretTokenPrevious }),
      ...(tls !== undefined && { tls }),
      limits: {
        maxConnections: config.maxConnections,
        maxConnectionsPerAddress: config.maxConnectionsPerAddress,
        maxInFlightPerAddress: config.maxInFlightPerAddress,
      },
      eventStreams: { maxStreams: config.maxEventStreams, maxStreamsPerAddress: config.maxEventStreamsPerAddress },
      memoryBudget,
      ...(config.corsOrigins !== undefined && { corsOrigins: config.corsOrigins }),
      ...withAllowedHosts(config.allowedHosts ?? defaultAllowedHosts(config.host)),
      ...(metrics !== undefined && { metrics }),
      ui: config.ui,
    });
  } catch (err) {
    if (err instanceof UiNotBuiltError) throw new StartupError(`${err.message}; or start with --no-ui`);
    // Only a certificate or key OpenSSL cannot use makes this throw (readTlsFiles checked the usual faults).
    throw new StartupError(`cannot use the TLS certificate ${config.tls?.certFile} or key ${config.tls?.keyFile}: ${(err as Error).message}`);
  }
  let address;
  try {
    address = await listen(server, config.port, config.host);
  } catch (err) {
    // A password generated by a start that never served was never shown nor used: removed, so that
    // the next start makes one and shows it, instead of keeping one nobody was told.
    if (secrets.generated !== undefined) await rm(secrets.generated, { force: true });
    throw new StartupError(`cannot listen on ${config.host ?? '*'}:${config.port}: ${(err as Error).message}`);
  }
  if (secrets.generated !== undefined) showGeneratedPassword(config.username, secrets.password, secrets.generated);
  return { server, address };
}

/** The metrics listener, when METRICS_PORT asks for it: its own port, never the public one. */
async function startMetrics(
  config: Config,
  metrics: CatalogueMetrics | undefined,
  logger: Logger,
  memoryBudget: MemoryBudget,
): Promise<(() => Promise<void>) | undefined> {
  if (config.metrics === undefined || metrics === undefined) return undefined;
  const { port, host } = config.metrics;
  // ALLOWED_HOSTS names the service; scrapers reach this listener by its own address.
  const server = createMetricsServer(metrics.registry, { ...withAllowedHosts(defaultAllowedHosts(host)), logger, memoryBudget });
  let address: AddressInfo;
  try {
    address = await listen(server, port, host);
  } catch (err) {
    server.close();
    throw new StartupError(`cannot listen for metrics on ${host}:${port}: ${(err as Error).message}`);
  }
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  logger.info(`metrics on http://${shown}:${address.port}/metrics`, { metricsPort: address.port });
  return async () => {
    await server.shutdown();
    metrics.close();
  };
}

/**
 * One Ctrl-C can arrive twice: the terminal signals the whole foreground process group, and a
 * supervisor in it (`tsx watch` for `npm run dev`, `node --watch`) relays its own copy within
 * milliseconds. A SIGINT this soon after the first is that copy, not an operator asking twice.
 */
const SAME_CTRL_C_MS = 1000;

/** SIGINT or SIGTERM drains the server; a second one exits at once. */
function installSignalHandlers(server: CatalogueServer, logger: Logger, stopMetrics: (() => Promise<void>) | undefined): void {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (first !== undefined) {
      if (signal === 'SIGINT' && first.signal === 'SIGINT' && performance.now() - first.at < SAME_CTRL_C_MS) return;
      // A second signal: the operator wants out now.
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    first = { signal, at: performance.now() };
    logger.info(`${signal} received: finishing requests in flight, then exiting`);
    // The metrics listener drains beside the service, within the same grace period.
    Promise.all([server.shutdown(), stopMetrics?.()]).then(
      ([{ abandoned }]) => {
        if (abandoned === 0) logger.info('stopped cleanly');
        else logger.warn(`stopped: ${abandoned} request${abandoned === 1 ? ' was' : 's were'} still in flight at the ${SHUTDOWN_GRACE_MS / 1000} s limit and cut off`, { abandoned });
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      },
      (err: unknown) => {
        logger.error('shutdown failed', { err: err as Error });
        process.exitCode = 1;
        process.exit();
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

async function serve(config: Config, warnings: readonly string[]): Promise<void> {
  let tls;
  try {
    tls = config.tls === undefined ? undefined : readTlsFiles(config.tls);
  } catch (err) {
    return fatal((err as Error).message);
  }
  const logger = startLogger(config.logLevel);
  for (const warning of warnings) logger.warn(warning);
  const dataDir = resolve(config.dataDir);
  const metrics = config.metrics === undefined ? undefined : createMetrics();
  // One budget for the store's retained changes and everything the app's clients hold.
  const memoryBudget = new MemoryBudget(config.memoryBudgetBytes ?? defaultMemoryBudgetBytes());
  let store: BookStore;
  let location = dataDir;
  let running: Running;
  let stopMetrics: (() => Promise<void>) | undefined;
  try {
    if (config.store === undefined) store = await openDataDir(dataDir, logger, metrics?.storeObserver, memoryBudget, config.journalCompactBytes);
    else ({ store, location } = await openPostgres(config, logger, metrics, memoryBudget));
  } catch (err) {
    metrics?.close();
    return fatal((err as StartupError).message);
  }
  try {
    running = await startServer(config, store, dataDir, tls, logger, metrics, memoryBudget);
  } catch (err) {
    metrics?.close();
    await store.close();
    return fatal((err as StartupError).message);
  }
  const { server, address } = running;
  try {
    stopMetrics = await startMetrics(config, metrics, logger, memoryBudget);
  } catch (err) {
    metrics?.close();
    await server.shutdown();
    return fatal((err as StartupError).message);
  }
  installSignalHandlers(server, logger, stopMetrics);
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const scheme = tls === undefined ? 'http' : 'https';
  // Only now: a supervisor that signals as soon as it reads this line must find the handlers set.
  logger.info(`listening on ${scheme}://${host}:${address.port}, data in ${location}`, { port: address.port, dataDir: location });
}

async function main(): Promise<void> {
  let command;
  let warnings: string[];
  try {
    const dotenv = readDotenv();
    command = parseCommand({ argv: process.argv.slice(2), env: process.env, dotenv });
    // Node's .env parser skips such lines silently; a typo must not leave a default in force unsaid.
    warnings = malformedDotenvLines(dotenv ?? '').map((line) => `.env line ${line} is not NAME=value: ignored`);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`book-catalogue: ${err.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw err;
  }
  if (command.kind === 'help') process.stdout.write(USAGE);
  else if (command.kind === 'version') process.stdout.write(`${packageVersion()}\n`);
  else if (command.kind === 'export' || command.kind === 'import' || command.kind === 'move') {
    for (const warning of warnings) process.stderr.write(`book-catalogue: warning: ${warning}\n`);
    process.exitCode = command.kind === 'move' ? await runMoveCommand(command, process.stderr) : await runBackupCommand(command, process);
  } else await serve(command.config, warnings);
}

main().catch((err: unknown) => {
  process.stderr.write(`book-catalogue: unexpected failure: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
