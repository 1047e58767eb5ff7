/**
 * Every message string the service can send, each to the letter (docs/contract.md, "Messages").
 */
export const MESSAGES = {
  tokenGenerated: 'Token generated successfully',
  bookCreated: 'Book created successfully',
  booksRetrieved: 'Books retrieved successfully',
  bookRetrieved: 'Book retrieved successfully',
  bookUpdated: 'Book updated successfully',
  bookDeleted: 'Book deleted successfully',
  ok: 'OK',
  invalidRequestPayload: 'Invalid request payload',
  invalidInput: 'Invalid input',
  invalidBookId: 'Invalid book id',
  invalidQuery: 'Invalid query',
  invalidCredentials: 'Invalid credentials',
  tokenRequired: 'Authorization token required',
  invalidToken: 'Invalid token',
  bookNotFound: 'Book not found',
  notFound: 'Not found',
  methodNotAllowed: 'Method not allowed',
  payloadTooLarge: 'Payload too large',
  tooManyLoginAttempts: 'Too many login attempts',
  badRequest: 'Bad request',
  requestTimeout: 'Request timeout',
  headersTooLarge: 'Request header fields too large',
  couldNotGenerateToken: 'Could not generate token',
  preconditionFailed: 'Precondition failed',
  changesRetrieved: 'Changes retrieved successfully',
  changesUnavailable: 'Changes no longer available',
  shuttingDown: 'Shutting down',
  notReady: 'Not ready',
  internalError: 'Internal server error',
} as const;

/** One of the exact envelope messages in MESSAGES. */
export type Message = (typeof MESSAGES)[keyof typeof MESSAGES];

/** An answer that is not a success: the status and the exact envelope message, plus headers. */
export class HttpError extends Error {
  readonly status: number;
  override readonly message: Message;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(status: number, message: Message, headers?: Readonly<Record<string, string>>) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.message = message;
    this.headers = headers;
  }
}

/** Stable codes for the faults a library user may want to tell apart. */
export const ERROR_CODES = {
  config: 'ERR_CONFIG',
  dataDirLocked: 'ERR_DATA_DIR_LOCKED',
  storeCorrupt: 'ERR_STORE_CORRUPT',
  storeUnavailable: 'ERR_STORE_UNAVAILABLE',
  preconditionFailed: 'ERR_PRECONDITION_FAILED',
  changesUnavailable: 'ERR_CHANGES_UNAVAILABLE',
} as const;

/** Invalid configuration: startup stops with this one line. */
export class ConfigError extends Error {
  readonly code = ERROR_CODES.config;
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  readonly code = ERROR_CODES.dataDirLocked;
  readonly dir: string;
  readonly pid: number;
  constructor(dir: string, pid: number) {
    super(`data directory ${dir} is in use by another process (pid ${pid})`);
    this.name = 'DataDirLockedError';
    this.dir = dir;
    this.pid = pid;
  }
}

/** Damage in a storage file that is not a torn final record: never dropped silently. */
export class StoreCorruptError extends Error {
  readonly code = ERROR_CODES.storeCorrupt;
  readonly file: string;
  readonly offset: number;
  constructor(file: string, offset: number, detail: string) {
    super(`storage file ${file} is damaged at byte ${offset}: ${detail}`);
    this.name = 'StoreCorruptError';
    this.file = file;
    this.offset = offset;
  }
}

/** A conditional write's If-Match did not hold for the book it would replace; nothing was written. */
export class PreconditionFailedError extends Error {
  readonly code = ERROR_CODES.preconditionFailed;
  constructor() {
    super('the book does not match If-Match');
    this.name = 'PreconditionFailedError';
  }
}

/** A write could not be made durable; the change was not applied. */
export class StoreUnavailableError extends Error {
  readonly code = ERROR_CODES.storeUnavailable;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** `store.changes(since)` for a seq the feed no longer retains (or never had): reload, then follow. */
export class ChangesUnavailableError extends Error {
  readonly code = ERROR_CODES.changesUnavailable;
  readonly since: number;
  /** The lowest `since` the feed answers now. */
  readonly oldest: number;
  constructor(since: number, oldest: number) {
    super(`changes after ${since} are not available (the feed answers since ${oldest} or later)`);
    this.name = 'ChangesUnavailableError';
    this.since = since;
    this.oldest = oldest;
  }
}
