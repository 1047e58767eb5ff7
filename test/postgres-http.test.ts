import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { needsPostgres, startCluster, type Cluster } from './helpers/postgres.ts';

/**
 * The HTTP tests of every route a client sees, run unchanged with each app's store on PostgreSQL
 * (TEST_POSTGRES_DIR, read by test/helpers/app.ts): the same answers, statuses, ETags, pages,
 * searches and feeds as on the file store.
 */
const FILES = [
  'books-create',
  'books-read',
  'books-update',
  'books-delete',
  'conditional-requests',
  'etag',
  'list-pages',
  'list-stream',
  'search',
  'changes',
  'events',
  'reply-shapes',
  'contract',
].map((name) => fileURLToPath(new URL(`./${name}.test.ts`, import.meta.url)));

describe('the HTTP tests on the PostgreSQL store', needsPostgres(), () => {
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(() => cluster?.remove());

  // Its own bound: thirteen files, beside the rest of the suite on a loaded machine, outlast the default.
  it(`${FILES.length} test files pass unchanged with every app's catalogue in PostgreSQL`, { timeout: 900_000 }, async () => {
    // NODE_TEST_CONTEXT would make the inner runner report to this one instead of running on its own.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // TAP whatever the Node line's default reporter, for the summary line checked below.
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', '--test-timeout=120000', ...FILES], {
      env: { ...env, TEST_POSTGRES_DIR: cluster.dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0, output.slice(-20_000));
    assert.match(output, /^# fail 0$/m, output.slice(-2000));
    // Each app made a database of its own: the tests ran on PostgreSQL, not on the file store.
    assert.ok((await cluster.databases()) >= 20, `only ${await cluster.databases()} databases were made`);
  });
});
