import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The folder of the test files, as `node --test` is given them (relative to the repository root). */
export const TEST_DIR = 'test';
const HERE = fileURLToPath(new URL('./', import.meta.url));

/**
 * Test files at once. Each file is its own process and mostly waits on sockets, timers, fsync and
 * child processes, so more files than cores overlap their waits; node's default is one fewer than
 * the cores, one at a time on a 2-core host. Past about six the CPU is the limit and a file's own
 * waits only stretch (docs/development.md has the figures and the command that measured them).
 */
export const CONCURRENCY = 6;

/** Run after the others, one at a time, each for the reason given. */
export const SERIAL: Readonly<Record<string, string>> = {};

/**
 * `npm run test:quick`: the pieces tested directly (tokens, routing, configuration, the model, the
 * store's parts), for the edit-test loop, all in one process (test/quick.ts). No browser, no child
 * process, no large catalogue: test/suite-plan.test.ts holds them to that.
 */
export const QUICK: readonly string[] = [
  'jwt.test.ts',
  'router.test.ts',
  'config.test.ts',
  'throttle.test.ts',
  'credentials.test.ts',
  'messages.test.ts',
  'validate.test.ts',
  'memory-budget.test.ts',
  'change-log.test.ts',
  'search.test.ts',
  'store-index.test.ts',
  'store-catalogue.test.ts',
  'store-conditional.test.ts',
  'store-close.test.ts',
  'store-failure.test.ts',
  'store-recovery.test.ts',
  'snapshot-format.test.ts',
  'replay-change-types.test.ts',
  'ui-sse.test.ts',
];

/** Every test file's name, sorted. */
export function allTestFiles(): string[] {
  return readdirSync(HERE)
    .filter((f) => f.endsWith('.test.ts'))
    .sort();
}

export interface Batch {
  /** What `node --test` is given. */
  readonly files: readonly string[];
  readonly concurrency: number;
  /** What the batch is, for the runner's summary. */
  readonly label: string;
}

/**
 * The batches to run in order: the quick files, or every file with the serial ones after the rest.
 * A name in SERIAL or QUICK with no such file fails here, so a renamed file is not silently dropped.
 */
export function plan(which: 'all' | 'quick', files: readonly string[] = allTestFiles()): Batch[] {
  for (const name of [...Object.keys(SERIAL), ...QUICK]) {
    if (!files.includes(name)) throw new Error(`test/suite-plan.ts names ${name}, which is not in ${TEST_DIR}/`);
  }
  const path = (f: string): string => `${TEST_DIR}/${f}`;
  if (which === 'quick') return [{ files: [path('quick.ts')], concurrency: 1, label: `${QUICK.length} quick files in one process` }];
  const parallel = files.filter((f) => !(f in SERIAL));
  const serial = files.filter((f) => f in SERIAL);
  const batches: Batch[] = [{ files: parallel.map(path), concurrency: CONCURRENCY, label: `${parallel.length} files, ${CONCURRENCY} at a time` }];
  if (serial.length > 0) batches.push({ files: serial.map(path), concurrency: 1, label: `${serial.length} files, one at a time` });
  return batches;
}
