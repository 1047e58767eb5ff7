import { execFileSync } from 'node:child_process';
import { findTool, missingToolsLine } from './helpers/system-tools.ts';
import { STORE_PACKAGE, storePackageInstalled } from './helpers/postgres.ts';

// Run by `npm test` before the suite: one line when checks that need a system program will skip.
const line = missingToolsLine();
if (line !== undefined) process.stderr.write(`${line}\n`);
// The PostgreSQL store's checks need its package's own dependencies (pg) and its build (the service
// processes they start load dist/): done once, here, before the files run in parallel.
if (findTool('pg_ctl') !== undefined) {
  if (storePackageInstalled()) {
    execFileSync('npm', ['run', 'build', '--prefix', STORE_PACKAGE], { stdio: ['ignore', 'ignore', 'inherit'] });
  } else {
    process.stderr.write('Installing the PostgreSQL store package for its checks: npm ci --prefix packages/store-postgres\n');
    execFileSync('npm', ['ci', '--prefix', STORE_PACKAGE, '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
}
