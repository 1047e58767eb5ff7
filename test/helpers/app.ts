import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createLogger,
  createServer,
  listen,
  openStore,
  writeCatalogue,
  type Book,
  type BookStore,
  type CatalogueServer,
  type DurableBookStore,
  type Logger,
  type LogLevel,
  type MemoryBudget,
  type StoreObserver,
  type ServerOptions,
  type StoreOptions,
} from '../../src/index.ts';
import { signToken } from '../../src/auth/jwt.ts';
import { readFileDump } from '../../src/store/catalogue-dump.ts';
import { createDatabase, storePackage } from './postgres.ts';
import { tempDir } from './temp-dirs.ts';

export const TEST_SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
export const TEST_USER = 'librarian';
export const TEST_PASSWORD = 'correct horse battery staple';

export interface Envelope<T = unknown> {
  status: number;
  message: string;
  data: T;
}

export interface TestApp {
  url: string;
  port: number;
  dataDir: string;
  server: CatalogueServer;
  /** The store the app opened (what it serves, unless `wrapStore` put something in front of it). */
  store: DurableBookStore;
  /** Log lines the app wrote (JSON text). */
  logs: string[];
  /** A fresh valid token signed with the app's secret. */
  token(): string;
  /** fetch(url + path) with the JSON body and the token (unless `auth: false` or a header is given). */
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>;
  /** Stops the server; removes the data directory unless `keepData`. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body text, sent as is (`Content-Type: application/json` unless `headers` names one). */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
  /** false: no Authorization header. */
  auth?: boolean;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  json: Envelope;
}

export interface StartOptions extends Partial<Omit<ServerOptions, 'store' | 'logger'>> {
  /** Reuse an existing data directory (for restart tests). */
  dataDir?: string;
  /** Listen on this port (a restart on the port the clients know); default: an ephemeral one. */
  port?: number;
  logLevel?: LogLevel;
  /** Passed to openStore (a failing file layer, compaction sizes); with `metrics`, its observer is added. */
  storeOptions?: Omit<StoreOptions, 'logger'>;
  /** Books written to the fresh data directory (writeCatalogue) before the store opens it. */
  catalogue?: readonly Book[];
  /** What the app is given instead of the opened store (a proxy that fails on purpose). */
  wrapStore?: (store: DurableBookStore) => BookStore;
}

/**
 * For `wrapStore`: the opened store, but for the members `overrides` makes (given the store, to call
 * through to it), say a create that fails or waits.
 */
export function storeWith(overrides: (real: BookStore) => Partial<BookStore>): (real: BookStore) => BookStore {
  return (real) => {
    const replaced: Partial<BookStore> = overrides(real);
    return new Proxy(real, {
      get(target, prop) {
        if (prop in replaced) return replaced[prop as keyof BookStore];
        const value: unknown = Reflect.get(target, prop);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
}

/**
 * TEST_POSTGRES_DIR, the socket directory of a running PostgreSQL cluster (test/postgres-http.test.ts
 * starts one): every app then serves a catalogue in a database of its own there, so the HTTP tests
 * run unchanged against the PostgreSQL store. The switch lives here, never in src/.
 */
const POSTGRES_DIR = process.env.TEST_POSTGRES_DIR;
/** Where a data directory notes its database, so that a restart on the same directory opens the same catalogue. */
const DATABASE_NOTE = 'test-database-url';

/**
 * The PostgreSQL store for the app on `dataDir`: a new database the first time, holding whatever
 * catalogue the directory holds (`catalogue`, moved as `book-catalogue move to-postgres` does), the
 * same database on a restart.
 */
async function openPostgresFor(dataDir: string, socketDir: string, options: { logger: Logger; memoryBudget?: MemoryBudget; observer?: StoreObserver }): Promise<DurableBookStore> {
  const pg = await storePackage();
  const note = join(dataDir, DATABASE_NOTE);
  let url = await readFile(note, 'utf8').catch(() => undefined);
  if (url === undefined) {
    url = await createDatabase(socketDir);
    await pg.writeDump(url, await readFileDump(dataDir));
    await writeFile(note, url);
  }
  return pg.openPostgresStore(url, options);
}

/** Starts the service in-process on an ephemeral port with its own temporary data directory. */
export async function startApp(options: StartOptions = {}): Promise<TestApp> {
  const { dataDir: givenDir, port = 0, logLevel = 'debug', storeOptions, catalogue, wrapStore, ...appOptions } = options;
  const dataDir = givenDir ?? (await tempDir('book-catalogue-test-'));
  if (catalogue !== undefined) await writeCatalogue(dataDir, catalogue);
  const logs: string[] = [];
  const logger = createLogger({ level: logLevel, write: (line) => logs.push(line) });
  // A test that hands the store a file layer is about the file store: it gets one whatever TEST_POSTGRES_DIR says.
  const store =
    POSTGRES_DIR !== undefined && storeOptions?.fs === undefined
      ? await openPostgresFor(dataDir, POSTGRES_DIR, { logger, ...(storeOptions?.memoryBudget !== undefined && { memoryBudget: storeOptions.memoryBudget }), ...(appOptions.metrics !== undefined && { observer: appOptions.metrics.storeObserver }) })
      : await openStore(dataDir, { logger, ...storeOptions, ...(appOptions.metrics !== undefined && { observer: appOptions.metrics.storeObserver }) });
  const secret = appOptions.secret ?? TEST_SECRET;
  const server = createServer({
    secret,
    username: TEST_USER,
    password: TEST_PASSWORD,
    ...appOptions,
    store: wrapStore?.(store) ?? store,
    logger,
  });
  const address = await listen(server, port, '127.0.0.1');
  const url = `http://127.0.0.1:${address.port}`;
  const token = (): string => signToken(TEST_USER, typeof secret === 'string' ? Buffer.from(secret) : secret, Date.now() / 1000);
  return {
    url,
    port: address.port,
    dataDir,
    server,
    store,
    logs,
    token,
    async request(method, path, opts = {}) {
      const headers: Record<string, string> = { ...opts.headers };
      if (opts.auth !== false && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) {
        headers.authorization = token();
      }
      let body: string | Uint8Array | undefined = opts.rawBody;
      if (opts.body !== undefined) body = JSON.stringify(opts.body);
      // The service's bodies are JSON: say so unless the test names another type (POST /token needs it).
      if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
      const res = await fetch(url + path, { method, headers, ...(body !== undefined && { body }) });
      const text = await res.text();
      let json: Envelope;
      try {
        json = JSON.parse(text) as Envelope;
      } catch {
        json = { status: -1, message: `<not JSON: ${text.slice(0, 80)}>`, data: null };
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    async close(closeOptions = {}) {
      await server.shutdown(1000);
      if (!closeOptions.keepData && givenDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Why the app refused request `reqId`'s token, from its debug log (clients only ever see
 * `Invalid token`): lets a test show a token was refused by the check it names.
 */
export function tokenRejections(app: TestApp, reqId: string): unknown[] {
  return app.logs
    .map((line) => JSON.parse(line) as { msg: string; reqId?: string; reason?: unknown })
    .filter((l) => l.msg === 'token rejected' && l.reqId === reqId)
    .map((l) => l.reason);
}
