import { parseEnv } from 'node:util';
import { DEFAULT_LOGIN_MAX_FAILURES } from '../auth/throttle.ts';
import { BACKUP_USAGE, dataDirAndArguments, parseBackupCommand, type BackupCommand } from './backup-command.ts';
import { EVENT_STREAM_DEFAULTS } from '../events/stream-registry.ts';
import { wellFormedDotenv } from './dotenv-lines.ts';
import { ConfigError } from '../faults.ts';
import { parseCorsOrigins } from '../http/cors.ts';
import { parseAllowedHosts } from '../transport/host-names.ts';
import { TRANSPORT_LIMITS } from '../transport/limits.ts';
import { LOG_LEVELS, type LogLevel } from '../log.ts';
import { DEFAULT_MEMORY_BUDGET_BYTES } from '../memory/budget.ts';
import { COMPACTION_DEFAULTS } from '../store/compaction.ts';

/** The service's settings, as parseCommand resolves them from flags, environment and `.env`. */
export interface Config {
  port: number;
  /** undefined: all interfaces. */
  host: string | undefined;
  dataDir: string;
  logLevel: LogLevel;
  /** undefined: a secret is generated once and kept in the data directory. */
  secretToken: string | undefined;
  /** The secret being rotated out: verifies tokens, never signs them. */
  secretTokenPrevious: string | undefined;
  username: string;
  /** undefined: a password is generated once and kept in the data directory. */
  password: string | undefined;
  /** Failed logins per client address per 15 minutes before 429; 0 disables throttling. */
  loginMaxFailures: number;
  /** PEM files; both set: serve HTTPS, neither: plain HTTP. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** Concurrent connections; more are closed on arrival. */
  maxConnections: number;
  /** Concurrent connections from one client address; more are closed on arrival. 0: no limit (behind a proxy). */
  maxConnectionsPerAddress: number;
  /** Requests from one client address waiting for their answers, across its connections. 0: no limit. */
  maxInFlightPerAddress: number;
  /** Open GET /events streams; one more is 503 `Too many event streams`. */
  maxEventStreams: number;
  /** Open GET /events streams from one client address. 0: no limit. */
  maxEventStreamsPerAddress: number;
  /** Bytes clients may make the process hold beyond the catalogue (SECURITY.md, "Memory budget"); undefined: `defaultMemoryBudgetBytes()`. */
  memoryBudgetBytes: number | undefined;
  /** JOURNAL_COMPACT_KB in bytes: what the journal may always grow to before compaction (docs/storage.md, "Compaction"); undefined: the store's default. */
  journalCompactBytes: number | undefined;
  /** Origins allowed to call from a browser (`*`: any); absent: CORS off (docs/contract.md, "Cross-origin requests"). */
  corsOrigins?: string[];
  /** Host names accepted (docs/contract.md, "Host names"); absent: loopback names when HOST is loopback, else any. */
  allowedHosts?: string[];
  /** The metrics listener (GET /metrics); absent: off. */
  metrics?: { port: number; host: string };
  /** Serve the built-in page at `GET /` (on unless `UI=off` or `--no-ui`). */
  ui: boolean;
  /** STORE_URL: the catalogue on PostgreSQL (docs/scaling-out.md); absent: the file store in `dataDir`. */
  store?: PostgresSetting;
}

/** The PostgreSQL catalogue's settings: STORE_URL and PG_POOL_SIZE. */
export interface PostgresSetting {
  url: string;
  poolSize: number;
}

/** `move`: the catalogue with its position, from the data directory to STORE_URL's database or back. */
export interface MoveCommand {
  kind: 'move';
  direction: 'to-postgres' | 'to-files';
  dataDir: string;
  store: PostgresSetting;
}

/** What the command line asks for: help, version, serving, or a backup command. */
export type Command = { kind: 'help' } | { kind: 'version' } | { kind: 'serve'; config: Config } | BackupCommand | MoveCommand;

/** The inputs of parseCommand, passed in so that it reads no globals. */
export interface ConfigSources {
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Text of a `.env` file in the working directory, when there is one. */
  dotenv?: string | undefined;
}

const MIB = 1024 * 1024;
/** MEMORY_BUDGET_MB at most: a budget in bytes stays a safe integer (and far above any host's memory). */
const MAX_BUDGET_MIB = 1024 * 1024 * 1024;
/** JOURNAL_COMPACT_KB at most: 1 TiB, far past any journal worth replaying at startup. */
const MAX_JOURNAL_COMPACT_KIB = 1024 * 1024 * 1024;

const DEFAULTS = {
  port: 8080,
  dataDir: './data',
  logLevel: 'info',
  username: 'admin',
  loginMaxFailures: DEFAULT_LOGIN_MAX_FAILURES,
  /** Scrapes are for the operator's own network: loopback unless METRICS_HOST says otherwise. */
  metricsHost: '127.0.0.1',
  /** Connections per process: ten processes stay within PostgreSQL's default max_connections of 100. */
  pgPoolSize: 8,
} as const;

const FLAGS = {
  '--port': 'port',
  '--host': 'host',
  '--data-dir': 'dataDir',
  '--log-level': 'logLevel',
  '--tls-cert': 'tlsCert',
  '--tls-key': 'tlsKey',
  '--metrics-port': 'metricsPort',
  '--metrics-host': 'metricsHost',
} as const;
type FlagKey = (typeof FLAGS)[keyof typeof FLAGS];
/** Flags that take no value. */
const SWITCHES = { '--no-ui': 'noUi' } as const;
type SwitchKey = (typeof SWITCHES)[keyof typeof SWITCHES];

export const USAGE = `Usage: book-catalogue [options]
${BACKUP_USAGE}
Book catalogue HTTP/JSON service.

Options:
  --port <n>         listening port, 0..65535 (env PORT, default ${DEFAULTS.port})
  --host <addr>      listening address (env HOST, default all interfaces)
  --data-dir <dir>   data directory, created if missing (env DATA_DIR, default ${DEFAULTS.dataDir})
  --log-level <lvl>  ${LOG_LEVELS.join(', ')} (env LOG_LEVEL, default ${DEFAULTS.logLevel})
  --tls-cert <file>  PEM certificate chain: serve HTTPS (env TLS_CERT_FILE; needs --tls-key)
  --tls-key <file>   PEM private key (env TLS_KEY_FILE; needs --tls-cert)
  --metrics-port <n> serve GET /metrics (Prometheus) on this port (env METRICS_PORT; default off)
  --metrics-host <addr>  address of the metrics listener (env METRICS_HOST, default ${DEFAULTS.metricsHost})
  --no-ui            do not serve the built-in page at / (env UI=off)
  -h, --help         print this help and exit
  -v, --version      print the version and exit

Environment only:
  SECRET_TOKEN        HS256 signing secret (32+ bytes); generated and kept in the data dir if unset
  SECRET_TOKEN_PREVIOUS  the secret being rotated out: still verifies tokens, never signs
  AUTH_USERNAME       login name (default ${DEFAULTS.username})
  AUTH_PASSWORD       login password; generated and kept in the data dir if unset
  LOGIN_MAX_FAILURES  failed logins per address per 15 min before 429 (default ${DEFAULTS.loginMaxFailures}, 0 disables)
  MAX_CONNECTIONS     concurrent connections, 1 or more (default ${TRANSPORT_LIMITS.maxConnections})
  MAX_EVENT_STREAMS   open GET /events streams, 1 or more (default ${EVENT_STREAM_DEFAULTS.maxStreams})
  MAX_CONNECTIONS_PER_ADDRESS  connections from one client address (default ${TRANSPORT_LIMITS.maxConnectionsPerAddress}; 0: no limit)
  MAX_IN_FLIGHT_PER_ADDRESS  requests from one address waiting for answers (default ${TRANSPORT_LIMITS.maxInFlightPerAddress}; 0: no limit)
  MAX_EVENT_STREAMS_PER_ADDRESS  GET /events streams from one address (default ${EVENT_STREAM_DEFAULTS.maxStreamsPerAddress}; 0: no limit)
                      behind a reverse proxy every client has the proxy's address: set these three to 0
  MEMORY_BUDGET_MB    MiB clients may make the process hold beyond the catalogue, 1 or more (default: a quarter of the JavaScript heap limit, at most ${DEFAULT_MEMORY_BUDGET_BYTES / MIB})
  JOURNAL_COMPACT_KB  KiB the journal may always grow to before it is compacted into a snapshot, 1 or more (default ${COMPACTION_DEFAULTS.minBytes / 1024})
  CORS_ORIGINS        comma-separated origins browsers may call from (* for any); unset: CORS off
  ALLOWED_HOSTS       comma-separated host names answered (.example.com: and its subdomains; * for any);
                      unset: localhost names when HOST is a loopback address, else any
  UI                  on or off: the built-in page at / (default on)
  STORE_URL           postgres://user:password@host:port/database: the catalogue on PostgreSQL, shared by
                      every process given it (needs @book-catalogue/store-postgres); unset: the file store in the data dir
  PG_POOL_SIZE        connections each process opens to PostgreSQL, 1 or more (default ${DEFAULTS.pgPoolSize}), plus one that follows the feed

Flags win over environment variables, which win over a .env file in the working directory.
`;

type Flags = Partial<Record<FlagKey, string> & Record<SwitchKey, true>>;
/** A variable from the environment, else from `.env`; empty counts as unset. */
type EnvLookup = (key: string) => string | undefined;
/** Where a setting's value came from, as a person would look for it: `--port`, `PORT` or `PORT in .env`. */
type Origin = (flag: FlagKey | undefined, key: string) => string;

/**
 * Turns argv, the environment and `.env` text into a command. Pure: it reads no globals, so every
 * rule is testable directly; it throws ConfigError with one line a person can act on.
 */
export function parseCommand(sources: ConfigSources): Command {
  const args = sources.argv;
  const fileEnv = sources.dotenv === undefined ? {} : parseEnv(wellFormedDotenv(sources.dotenv));
  const env: EnvLookup = (key) => {
    const value = sources.env[key] ?? fileEnv[key];
    return value === '' ? undefined : value;
  };
  if (args[0] === 'move') {
    if (args.some((a) => a === '-h' || a === '--help')) return { kind: 'help' };
    return parseMoveCommand(args, env);
  }
  if (args[0] === 'export' || args[0] === 'import') {
    // `export --help`: the usage (which lists both commands) instead of "unknown option".
    if (args.some((a) => a === '-h' || a === '--help')) return { kind: 'help' };
    return parseBackupCommand(args, env('DATA_DIR') ?? DEFAULTS.dataDir);
  }
  const flags = parseFlags(args);
  if (flags === 'help' || flags === 'version') return { kind: flags };
  const origin: Origin = (flag, key) => {
    if (flag !== undefined && flags[flag] !== undefined) return flagName(flag);
    return sources.env[key] === undefined && fileEnv[key] !== undefined ? `${key} in .env` : key;
  };
  return { kind: 'serve', config: resolveConfig(flags, env, origin) };
}

function flagName(key: FlagKey): string {
  return Object.entries(FLAGS).find(([, k]) => k === key)?.[0] as string;
}

/** The serve flags by name, or help/version as soon as either appears (what follows is not read). */
function parseFlags(args: readonly string[]): Flags | 'help' | 'version' {
  const flags: Flags = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') return 'help';
    if (arg === '-v' || arg === '--version') return 'version';
    if (Object.hasOwn(SWITCHES, arg)) {
      flags[SWITCHES[arg as keyof typeof SWITCHES]] = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (!Object.hasOwn(FLAGS, name)) {
      throw new ConfigError(
        arg.startsWith('-') ? `unknown option ${name} (see --help)` : `unexpected argument ${JSON.stringify(arg)} (see --help)`,
      );
    }
    let value: string | undefined;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else {
      value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw new ConfigError(`option ${name} needs a value`);
      i++;
    }
    // `--data-dir=` would otherwise resolve to the working directory and fill it with data files.
    if (value === '') throw new ConfigError(`option ${name} needs a value`);
    flags[FLAGS[name as keyof typeof FLAGS]] = value;
  }
  return flags;
}

/** Flags win over the environment, which wins over `.env`, which wins over the defaults. */
function resolveConfig(flags: Flags, env: EnvLookup, origin: Origin): Config {
  const portText = flags.port ?? env('PORT');
  const logLevel = flags.logLevel ?? env('LOG_LEVEL') ?? DEFAULTS.logLevel;
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`invalid log level ${JSON.stringify(logLevel)} (${origin('logLevel', 'LOG_LEVEL')}): expected one of ${LOG_LEVELS.join(', ')}`);
  }
  const failuresText = env('LOGIN_MAX_FAILURES');
  const connectionsText = env('MAX_CONNECTIONS');
  const streamsText = env('MAX_EVENT_STREAMS');
  const perAddressText = {
    connections: env('MAX_CONNECTIONS_PER_ADDRESS'),
    inFlight: env('MAX_IN_FLIGHT_PER_ADDRESS'),
    streams: env('MAX_EVENT_STREAMS_PER_ADDRESS'),
  };
  const budgetText = env('MEMORY_BUDGET_MB');
  const compactText = env('JOURNAL_COMPACT_KB');
  const corsOrigins = namingDotenv('CORS_ORIGINS', origin, () => parseCorsOrigins(env('CORS_ORIGINS') ?? ''));
  const hostsText = env('ALLOWED_HOSTS');
  const allowedHosts = hostsText === undefined ? undefined : namingDotenv('ALLOWED_HOSTS', origin, () => parseAllowedHosts(hostsText));
  const certFile = flags.tlsCert ?? env('TLS_CERT_FILE');
  const keyFile = flags.tlsKey ?? env('TLS_KEY_FILE');
  const metricsPort = flags.metricsPort ?? env('METRICS_PORT');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new ConfigError('TLS needs both a certificate and a key: set TLS_CERT_FILE and TLS_KEY_FILE (or --tls-cert and --tls-key), or neither');
  }
  return {
    port: portText === undefined ? DEFAULTS.port : parsePort(portText, origin('port', 'PORT')),
    host: flags.host ?? env('HOST'),
    dataDir: flags.dataDir ?? env('DATA_DIR') ?? DEFAULTS.dataDir,
    logLevel: logLevel as LogLevel,
    secretToken: env('SECRET_TOKEN'),
    secretTokenPrevious: env('SECRET_TOKEN_PREVIOUS'),
    username: env('AUTH_USERNAME') ?? DEFAULTS.username,
    password: env('AUTH_PASSWORD'),
    loginMaxFailures:
      failuresText === undefined ? DEFAULTS.loginMaxFailures : parseWhole('failed-login limit', failuresText, 0, origin(undefined, 'LOGIN_MAX_FAILURES')),
    tls: certFile === undefined || keyFile === undefined ? undefined : { certFile, keyFile },
    maxConnections:
      connectionsText === undefined ? TRANSPORT_LIMITS.maxConnections : parseWhole('connection limit', connectionsText, 1, origin(undefined, 'MAX_CONNECTIONS')),
    maxEventStreams:
      streamsText === undefined ? EVENT_STREAM_DEFAULTS.maxStreams : parseWhole('event stream limit', streamsText, 1, origin(undefined, 'MAX_EVENT_STREAMS')),
    maxConnectionsPerAddress:
      perAddressText.connections === undefined
        ? TRANSPORT_LIMITS.maxConnectionsPerAddress
        : parseWhole('per-address connection limit', perAddressText.connections, 0, origin(undefined, 'MAX_CONNECTIONS_PER_ADDRESS')),
    maxInFlightPerAddress:
      perAddressText.inFlight === undefined
        ? TRANSPORT_LIMITS.maxInFlightPerAddress
        : parseWhole('per-address in-flight limit', perAddressText.inFlight, 0, origin(undefined, 'MAX_IN_FLIGHT_PER_ADDRESS')),
    maxEventStreamsPerAddress:
      perAddressText.streams === undefined
        ? EVENT_STREAM_DEFAULTS.maxStreamsPerAddress
        : parseWhole('per-address event stream limit', perAddressText.streams, 0, origin(undefined, 'MAX_EVENT_STREAMS_PER_ADDRESS')),
    memoryBudgetBytes:
      budgetText === undefined ? undefined : MIB * parseWhole('memory budget', budgetText, 1, origin(undefined, 'MEMORY_BUDGET_MB'), MAX_BUDGET_MIB),
    journalCompactBytes:
      compactText === undefined ? undefined : 1024 * parseWhole('journal compaction size', compactText, 1, origin(undefined, 'JOURNAL_COMPACT_KB'), MAX_JOURNAL_COMPACT_KIB),
    ...(corsOrigins.length > 0 && { corsOrigins }),
    ...(allowedHosts !== undefined && { allowedHosts }),
    ...(metricsPort !== undefined && { metrics: { port: parsePort(metricsPort, origin('metricsPort', 'METRICS_PORT')), host: flags.metricsHost ?? env('METRICS_HOST') ?? DEFAULTS.metricsHost } }),
    ui: flags.noUi !== true && parseOnOff('built-in page setting', env('UI') ?? 'on', origin(undefined, 'UI')),
    ...storeSetting(env, origin),
  };
}

/** STORE_URL and PG_POOL_SIZE; nothing when STORE_URL is unset. */
function storeSetting(env: EnvLookup, origin: Origin): { store?: PostgresSetting } {
  const url = env('STORE_URL');
  if (url === undefined) return {};
  // Never echoed: the URL may hold a password.
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError(`invalid STORE_URL (${origin(undefined, 'STORE_URL')}): expected a postgres:// or postgresql:// URL; unset, the catalogue is the file store in the data directory`);
  const poolText = env('PG_POOL_SIZE');
  return { store: { url, poolSize: poolText === undefined ? DEFAULTS.pgPoolSize : parseWhole('PostgreSQL pool size', poolText, 1, origin(undefined, 'PG_POOL_SIZE'), 1000) } };
}

/** `move to-postgres|to-files [--data-dir <dir>]`, with STORE_URL naming the database. */
function parseMoveCommand(args: readonly string[], env: EnvLookup): MoveCommand {
  const direction = args[1];
  if (direction !== 'to-postgres' && direction !== 'to-files') throw new ConfigError('move needs a direction: move to-postgres or move to-files (see --help)');
  const { dataDir, positional } = dataDirAndArguments('move', args.slice(2), env('DATA_DIR') ?? DEFAULTS.dataDir);
  if (positional.length > 0) throw new ConfigError(`unexpected argument ${JSON.stringify(positional[0])}: move takes the database from STORE_URL`);
  const { store } = storeSetting(env, (_flag, key) => key);
  if (store === undefined) throw new ConfigError('move needs STORE_URL: the PostgreSQL database to move the catalogue to or from');
  return { kind: 'move', direction, dataDir, store };
}

/** A list setting's parser names the variable in its message; one from `.env` says so too. */
function namingDotenv<T>(key: string, origin: Origin, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    throw origin(undefined, key) === key ? err : new ConfigError(`${(err as Error).message} (${key} in .env)`);
  }
}

function parseOnOff(what: string, text: string, from: string): boolean {
  if (text !== 'on' && text !== 'off') throw new ConfigError(`invalid ${what} ${JSON.stringify(text)} (${from}): expected on or off`);
  return text === 'on';
}

function parsePort(text: string, from: string): number {
  const port = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port <= 65535)) throw new ConfigError(`invalid port ${JSON.stringify(text)} (${from}): expected a whole number from 0 to 65535`);
  return port;
}

/** Decimal digits naming a safe integer from `min` to `max`; the message says exactly that, whatever was wrong. */
function parseWhole(what: string, text: string, min: number, from: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!(Number.isSafeInteger(n) && n >= min && n <= max)) {
    throw new ConfigError(`invalid ${what} ${JSON.stringify(text)} (${from}): expected a whole number from ${min} to ${max}`);
  }
  return n;
}
