import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { PostgresStorePackage } from '../../src/cli/store-package.ts';
import { findTool } from './system-tools.ts';
import { NOBODY } from './other-user.ts';

const run = promisify(execFile);

/** The store package of this repository, whose tests need its own `npm ci` (it holds `pg`). */
export const STORE_PACKAGE = fileURLToPath(new URL('../../packages/store-postgres/', import.meta.url));
/** The package's source entry: tests load it through tsx, as they load the core's source. */
export const STORE_PACKAGE_ENTRY = join(STORE_PACKAGE, 'src/index.ts');

/** Whether the store package's dependencies are installed (`npm ci --prefix packages/store-postgres`). */
export function storePackageInstalled(): boolean {
  return existsSync(join(STORE_PACKAGE, 'node_modules/pg/package.json')) && existsSync(join(STORE_PACKAGE, 'dist/index.js'));
}

/** Options for `describe()`: skipped, saying how to get what is missing, without PostgreSQL or the package. */
export function needsPostgres(): { skip: string | false } {
  if (findTool('pg_ctl') === undefined) return { skip: 'needs PostgreSQL (apt-get install postgresql)' };
  if (!storePackageInstalled()) return { skip: 'needs the store package installed (npm ci --prefix packages/store-postgres)' };
  return { skip: false };
}

/** A throw-away PostgreSQL cluster in a temp directory, reached through a Unix socket there only. */
export interface Cluster {
  /** The directory holding the socket (and the data). */
  readonly dir: string;
  /** A new empty database; its URL. */
  createDatabase(): Promise<string>;
  /** How many databases the tests made in it. */
  databases(): Promise<number>;
  /** Stops the server at once, as a crash would (`pg_ctl stop -m immediate`). */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes every file. */
  remove(): Promise<void>;
}

let databases = 0;

/** The psql of the PostgreSQL found (pg_ctl's directory). */
function psqlPath(): string {
  const pgCtl = findTool('pg_ctl');
  if (pgCtl === undefined) throw new Error('pg_ctl not found (apt-get install postgresql)');
  return join(dirname(realpathSync(pgCtl)), 'psql');
}

/** A new empty database in the cluster whose socket is in `socketDir`; its URL. */
export async function createDatabase(socketDir: string): Promise<string> {
  const name = `catalogue_${process.pid}_${++databases}`;
  await run(psqlPath(), ['-h', socketDir, '-U', 'postgres', '-d', 'postgres', '-v', 'ON_ERROR_STOP=1', '-q', '-c', `CREATE DATABASE ${name}`]);
  return `postgresql://postgres@/${name}?host=${encodeURIComponent(socketDir)}`;
}

/** Runs `sql` on the database `url` names (psql), as an operator or a failure would; its output, unaligned. */
export async function sql(url: string, statement: string): Promise<string> {
  const { stdout } = await run(psqlPath(), [url, '-v', 'ON_ERROR_STOP=1', '-A', '-t', '-q', '-c', statement]);
  return stdout.trim();
}

/** What the tests use of the store package (its source, loaded through tsx). */
export function storePackage(): Promise<PostgresStorePackage> {
  return import(STORE_PACKAGE_ENTRY) as Promise<PostgresStorePackage>;
}

/**
 * initdb + pg_ctl start in a fresh temp directory. PostgreSQL refuses to run as root: as root, the
 * server runs as `nobody` (uid 65534) in a directory given to it; otherwise as the current user.
 * It listens on no TCP port: its socket is in the directory, so no port is taken or raced for.
 */
export async function startCluster(): Promise<Cluster> {
  const pgCtl = findTool('pg_ctl');
  if (pgCtl === undefined) throw new Error('pg_ctl not found (apt-get install postgresql)');
  const bin = dirname(realpathSync(pgCtl));
  const dir = await mkdtemp(join(tmpdir(), 'book-catalogue-pg-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) await chown(dir, NOBODY, NOBODY);
  const data = join(dir, 'data');
  const as = (program: string, args: string[]): Promise<unknown> =>
    asRoot ? run('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', join(bin, program), ...args], { cwd: dir }) : run(join(bin, program), args, { cwd: dir });
  const options = `-c listen_addresses='' -k ${dir} -c max_connections=200 -c shared_buffers=64MB`;
  const start = async (): Promise<void> => {
    await as('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', options, 'start']);
  };
  try {
    await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
    await start();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  const stop = async (): Promise<void> => {
    await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
  };
  return {
    dir,
    createDatabase: () => createDatabase(dir),
    async databases() {
      const { stdout } = await run(psqlPath(), ['-h', dir, '-U', 'postgres', '-d', 'postgres', '-A', '-t', '-c', "SELECT count(*) FROM pg_database WHERE datname LIKE 'catalogue\\_%'"]);
      return Number(stdout.trim());
    },
    stop,
    start,
    async remove() {
      await stop().catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}
