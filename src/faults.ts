/**
 * Library faults: what went wrong below HTTP (configuration, the data directory, storage), each
 * with a stable `code`. None of them carries an HTTP status: the app maps the ones a request can
 * meet to an answer in one place (service/app.ts).
 */
/** Stable codes for the faults a library user may want to tell apart. */
export const ERROR_CODES = {
  config: 'ERR_CONFIG',
  dataDirLocked: 'ERR_DATA_DIR_LOCKED',
  dataNotPrivate: 'ERR_DATA_NOT_PRIVATE',
  storeCorrupt: 'ERR_STORE_CORRUPT',
  storeUnavailable: 'ERR_STORE_UNAVAILABLE',
  preconditionFailed: 'ERR_PRECONDITION_FAILED',
  invalidBook: 'ERR_INVALID_BOOK',
  changesUnavailable: 'ERR_CHANGES_UNAVAILABLE',
  bookIdsExhausted: 'ERR_BOOK_IDS_EXHAUSTED',
} as const;

/**
 * Whether `err` is the fault with this code. The app tells a store's faults apart by code, not by
 * class: a store in another package may have loaded its own copy of this module.
 */
export function isFault(err: unknown, code: (typeof ERROR_CODES)[keyof typeof ERROR_CODES]): boolean {
  return err instanceof Error && (err as { code?: unknown }).code === code;
}

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

/**
 * The data directory, or a file the store opened in it, is not the service's user's alone: others
 * could have planted it or can read or change it through another name, so none of it is used.
 */
export class DataNotPrivateError extends Error {
  readonly code = ERROR_CODES.dataNotPrivate;
  readonly path: string;
  constructor(path: string, problem: string, fix: string) {
    super(`${path} ${problem}: ${fix}`);
    this.name = 'DataNotPrivateError';
    this.path = path;
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

/**
 * A storage file in a format version this release cannot read: written by a later release. Nothing
 * is damaged; run that release (or a later one) on the directory.
 */
export class StoreFormatError extends StoreCorruptError {
  constructor(file: string, detail: string) {
    super(file, 0, detail);
    this.message = `storage file ${file} is in a format this release cannot read (${detail}): it was written by a later release`;
    this.name = 'StoreFormatError';
  }
}

/** A conditional write's condition did not hold for the book it would replace; nothing was written. */
export class PreconditionFailedError extends Error {
  readonly code = ERROR_CODES.preconditionFailed;
  constructor() {
    super('the book does not meet the condition of the write');
    this.name = 'PreconditionFailedError';
  }
}

/**
 * A create after the last book id (2^53 − 1) was given: ids are never reused, so no book can be
 * created in this catalogue any more; nothing was written. Updates and deletes still work.
 */
export class BookIdsExhaustedError extends Error {
  readonly code = ERROR_CODES.bookIdsExhausted;
  constructor() {
    super('every book id has been given: ids are never reused, so no book can be created');
    this.name = 'BookIdsExhaustedError';
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
  /** The feed's last seq (the highest `since` it answers): reload the books, then follow from it. */
  readonly latest: number;
  constructor(since: number, oldest: number, latest: number) {
    super(`changes after ${since} are not available: the feed holds those after ${oldest}, up to ${latest}; reload the books, then follow from ${latest}`);
    this.name = 'ChangesUnavailableError';
    this.since = since;
    this.oldest = oldest;
    this.latest = latest;
  }
}
