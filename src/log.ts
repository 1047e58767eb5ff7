import { hostname } from 'node:os';

/** The levels LOG_LEVEL accepts, most verbose first; `silent` writes nothing. */
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
/** One of LOG_LEVELS. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** pino's numeric levels, so existing log tooling reads these lines. */
const LEVEL_NUMBERS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity } as const;

export type LogFields = Readonly<Record<string, unknown>>;

/** A JSON-lines logger with pino's field names; make one with createLogger. */
export interface Logger {
  readonly level: LogLevel;
  isEnabled(level: Exclude<LogLevel, 'silent'>): boolean;
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

/** Options of createLogger: where lines go, the level and the clock. */
export interface LoggerOptions {
  level?: LogLevel;
  /** Receives one complete JSON line (newline included) per entry. */
  write: (line: string) => void;
  now?: () => number;
}

/**
 * A JSON-lines logger with pino's field names. Callers pass only fields that are safe to log:
 * nothing here ever sees headers, bodies, tokens or passwords.
 */
export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? 'info';
  const threshold = LEVEL_NUMBERS[level];
  const { write } = options;
  const now = options.now ?? Date.now;
  const prefixTail = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;

  const emit = (name: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields): void => {
    const n = LEVEL_NUMBERS[name];
    if (n < threshold) return;
    let line = `{"level":${n},"time":${now()}${prefixTail}`;
    if (fields !== undefined) {
      for (const key of Object.keys(fields)) {
        const value = fields[key];
        if (value === undefined) continue;
        line += `,${JSON.stringify(key)}:${serializeField(value)}`;
      }
    }
    write(`${line},"msg":${JSON.stringify(msg)}}\n`);
  };

  return {
    level,
    isEnabled: (name) => LEVEL_NUMBERS[name] >= threshold,
    debug: (msg, fields) => emit('debug', msg, fields),
    info: (msg, fields) => emit('info', msg, fields),
    warn: (msg, fields) => emit('warn', msg, fields),
    error: (msg, fields) => emit('error', msg, fields),
  };
}

function serializeField(value: unknown): string {
  if (value instanceof Error) {
    return JSON.stringify({ type: value.name, message: value.message, stack: value.stack });
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * `logger` with `fields` on every line it writes: the lines of a second listener (the metrics one)
 * say so, where they would otherwise read like the service's own.
 */
export function withFields(logger: Logger, fields: LogFields): Logger {
  const merged = (more: LogFields | undefined): LogFields => (more === undefined ? fields : { ...fields, ...more });
  return {
    level: logger.level,
    isEnabled: (name) => logger.isEnabled(name),
    debug: (msg, more) => logger.debug(msg, merged(more)),
    info: (msg, more) => logger.info(msg, merged(more)),
    warn: (msg, more) => logger.warn(msg, merged(more)),
    error: (msg, more) => logger.error(msg, merged(more)),
  };
}

/** The logger a library user gets when they pass none: it writes nothing anywhere. */
export const silentLogger: Logger = createLogger({ level: 'silent', write: () => {} });

/** Lines written in one turn of the event loop, handed on as one chunk. */
export interface LineBatch {
  write(line: string): void;
  /** Hands on what is pending now; call it before the process exits. */
  flush(): void;
}

/**
 * At `info` every request writes a line, and one write(2) per line costs as much as building the
 * line; so lines written during one turn of the event loop go out together at the end of that
 * turn, or at once past `maxChars`. Order is kept; nothing waits longer than one turn.
 */
export function batchLines(write: (chunk: string) => void, maxChars = 64 * 1024): LineBatch {
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    write(chunk);
  };
  return {
    write(line) {
      pending += line;
      if (pending.length >= maxChars) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

/** While a failure keeps recurring (a full disk fails every write), at most one line about it per this many ms. */
export const REPEATED_FAILURE_LOG_MS = 10_000;

/**
 * Which lines about a failure that keeps recurring reach the log: the first `burst` of an interval
 * at once, then none until the interval ends, the next line saying how many were left out. A disk
 * that refuses every write fails every request: logging each with its stack wrote 597k lines
 * (450 MB) in 130 s.
 */
export class LogRate {
  readonly #intervalMs: number;
  readonly #burst: number;
  readonly #now: () => number;
  #unlogged = 0;
  #windowStart = Number.NEGATIVE_INFINITY;
  #inWindow = 0;

  constructor(intervalMs: number, now: () => number = performance.now.bind(performance), burst = 1) {
    this.#intervalMs = intervalMs;
    this.#burst = burst;
    this.#now = now;
  }

  /** A run of failures starts: its next one is logged at once. */
  reset(): void {
    this.#windowStart = Number.NEGATIVE_INFINITY;
    this.#inWindow = 0;
    this.#unlogged = 0;
  }

  /** One more failure: undefined when it is not to be logged, else how many were left out before it. */
  due(): number | undefined {
    const now = this.#now();
    if (now - this.#windowStart >= this.#intervalMs) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    if (this.#inWindow === this.#burst) {
      this.#unlogged++;
      return undefined;
    }
    this.#inWindow++;
    const left = this.#unlogged;
    this.#unlogged = 0;
    return left;
  }
}
