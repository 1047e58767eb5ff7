import assert from 'node:assert/strict';
import type { DurableBookStore } from '../store/book-store.ts';

/** The test functions the suite declares its tests with: node:test's, or any runner's of the same shape. */
export interface TestFunctions {
  describe(name: string, fn: () => void): unknown;
  it(name: string, fn: () => Promise<void>): unknown;
}

/** How a child process opens a catalogue: `module`'s default export, called with `arg`. */
export interface Opener {
  /** A module URL or absolute path whose default export is `(arg: string) => Promise<DurableBookStore>`. */
  readonly module: string;
  readonly arg: string;
  /** Node options the child needs to load it (`['--import', 'tsx']` for TypeScript). */
  readonly execArgv?: readonly string[];
}

/** One empty catalogue prepared for a test. */
export interface CatalogueUnderTest {
  /** Opens a store on it; again after a close or a lost process: the same catalogue. */
  open(): Promise<DurableBookStore>;
  /** How a child process opens it: the suite kills one mid-write (SIGKILL) to show acknowledged writes survive. */
  readonly opener: Opener;
  /** Removes it, once every store on it is closed. */
  remove(): Promise<void>;
}

/** A store implementation, as the suite sees it. */
export interface ConformanceTarget {
  /**
   * Whether several stores may be open on one catalogue at once (several processes serving it):
   * then every rule is also shown with writers on two stores.
   */
  readonly shared: boolean;
  /** A new, empty catalogue. */
  catalogue(): Promise<CatalogueUnderTest>;
}

/** Slack for a loaded machine: a wait fails with a message past it, never a timing assertion. */
export const WAIT_MS = 15_000;

/**
 * Runs `body` with `count` stores open on one new catalogue (two only where the target is shared;
 * otherwise the same store twice), closing them and removing the catalogue afterwards.
 */
export async function withStores(target: ConformanceTarget, body: (a: DurableBookStore, b: DurableBookStore, catalogue: CatalogueUnderTest) => Promise<void>): Promise<void> {
  const catalogue = await target.catalogue();
  const opened: DurableBookStore[] = [];
  try {
    const a = await catalogue.open();
    opened.push(a);
    const b = target.shared ? await catalogue.open() : a;
    if (b !== a) opened.push(b);
    await body(a, b, catalogue);
  } finally {
    for (const store of opened) await store.close();
    await catalogue.remove();
  }
}

/** `promise`, or a failure naming `what` if it has not settled within WAIT_MS. */
export async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${WAIT_MS / 1000} s`)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once the store's memory holds every acknowledged change (BookStore.caughtUp). */
export async function caughtUp(store: DurableBookStore): Promise<void> {
  await within('the store catching up with the catalogue', store.caughtUp() ?? Promise.resolve());
}

/** Every change the store's feed holds from the start, ascending: the feed must retain them all. */
export function wholeFeed(store: DurableBookStore): { seq: number; type: string; id: number; bookJson: string | null }[] {
  const entries = store.feed.after(0, Number.MAX_SAFE_INTEGER);
  assert.ok(entries !== undefined, `the feed no longer holds the changes after 0 (oldest ${store.feed.oldest})`);
  return entries;
}

export const book = (n: number): { title: string; author: string; year: number } => ({ title: `Title ${n}`, author: `Author ${n}`, year: 1900 + (n % 100) });
