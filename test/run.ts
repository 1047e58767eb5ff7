import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { STORE_PACKAGE, storePackageInstalled } from './helpers/postgres.ts';
import { findTool, missingToolsLine } from './helpers/system-tools.ts';
import { plan } from './suite-plan.ts';

/*
 * `npm test`, `npm run test:node24`/`test:node26` (with the Node they run) and `npm run test:quick`
 * (`--quick`) all run this: the batches of test/suite-plan.ts, each one `node --test` run. Other
 * arguments go to `node --test` as they are (`npm test -- --test-reporter=dot`); a
 * `--test-concurrency` among them replaces the plan's.
 */
const USAGE = 'node --import tsx test/run.ts [--quick] [node --test options]';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The outer guard for a test that hangs; each wait inside a test fails sooner, naming what did not happen. */
const TEST_TIMEOUT_MS = 300_000;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const passed = args.filter((a) => a !== '--quick');
if (passed.some((a) => !a.startsWith('--'))) {
  process.stderr.write(`test/run.ts takes options, not files (${passed.join(' ')}); one file: node --import tsx --test test/<area>.test.ts\n\n${USAGE}\n`);
  process.exit(2);
}
const ownConcurrency = passed.some((a) => a.startsWith('--test-concurrency'));

const line = missingToolsLine();
if (line !== undefined && !quick) process.stderr.write(`${line}\n`);
// The PostgreSQL store's checks need its package's own dependencies (pg) and its build (the service
// processes they start load dist/): done once, here, before the files run in parallel.
if (!quick && findTool('pg_ctl') !== undefined) {
  if (storePackageInstalled()) {
    execFileSync('npm', ['run', 'build', '--prefix', STORE_PACKAGE], { stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    process.stderr.write('Installing the PostgreSQL store package for its checks: npm ci --prefix packages/store-postgres\n');
    execFileSync('npm', ['ci', '--prefix', STORE_PACKAGE, '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
}

const summary: string[] = [];
let failed = false;
for (const batch of plan(quick ? 'quick' : 'all')) {
  const concurrency = ownConcurrency ? [] : [`--test-concurrency=${batch.concurrency}`];
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-timeout=${TEST_TIMEOUT_MS}`, ...concurrency, ...passed, ...batch.files], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const seconds = Math.round((performance.now() - started) / 1000);
  const verdict = run.error !== undefined ? `did not start: ${run.error.message}` : run.status === 0 ? 'passed' : `failed (${run.signal ?? `exit ${run.status}`})`;
  if (verdict !== 'passed') failed = true;
  summary.push(`${batch.label}${ownConcurrency ? ' (at the given concurrency)' : ''}: ${verdict} in ${seconds} s`);
}
process.stdout.write(`\n${summary.join('\n')}\n`);
process.exitCode = failed ? 1 : 0;
