import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { packageFileUrl } from '../package-files.ts';
import type { DurableBookStore } from '../store/book-store.ts';
import type { CatalogueDump } from '../store/catalogue-dump.ts';
import type { Logger } from '../log.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import type { Registry } from '../metrics/registry.ts';
import type { StoreObserver } from '../store/observer.ts';

/** The PostgreSQL store's package: the core never depends on it, and loads it only when STORE_URL asks. */
export const POSTGRES_STORE_PACKAGE = '@book-catalogue/store-postgres';

/** What the service uses of that package (packages/store-postgres/src/index.ts). */
export interface PostgresStorePackage {
  openPostgresStore(
    url: string,
    options: { logger?: Logger; observer?: StoreObserver; memoryBudget?: MemoryBudget; registry?: Registry; poolSize?: number },
  ): Promise<DurableBookStore>;
  readDump(url: string): Promise<CatalogueDump>;
  writeDump(url: string, dump: CatalogueDump): Promise<void>;
  /** The URL with its password replaced, for logs and messages. */
  redactedUrl(url: string): string;
}

/** The package is not installed where the core can find it: the message says how to install it. */
export class StorePackageMissingError extends Error {}

/**
 * The package, installed beside the core (`npm install book-catalogue @book-catalogue/store-postgres`),
 * else built in a checkout of this repository (packages/store-postgres, after
 * `npm ci --prefix packages/store-postgres`).
 */
export async function loadPostgresStore(): Promise<PostgresStorePackage> {
  try {
    return (await import(POSTGRES_STORE_PACKAGE)) as PostgresStorePackage;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND' || !(err as Error).message.includes(POSTGRES_STORE_PACKAGE)) throw err;
  }
  const inCheckout = packageFileUrl('packages/store-postgres/dist/index.js');
  if (inCheckout !== undefined && existsSync(fileURLToPath(inCheckout)) && existsSync(fileURLToPath(new URL('../node_modules/pg', inCheckout)))) {
    return (await import(inCheckout.href)) as PostgresStorePackage;
  }
  throw new StorePackageMissingError(
    `STORE_URL names PostgreSQL, whose store is the package ${POSTGRES_STORE_PACKAGE}: install it beside book-catalogue (npm install ${POSTGRES_STORE_PACKAGE}), or in a checkout run npm ci --prefix packages/store-postgres`,
  );
}
