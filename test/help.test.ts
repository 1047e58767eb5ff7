import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const temp = tempDirs('book-catalogue-help-');
after(() => temp.removeAll());

function run(command: string, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: ROOT, env: { ...process.env, npm_config_update_notifier: 'false' } }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
    );
  });
}

const STACK = /^\s+at /m;

describe('--help works everywhere a newcomer types it', () => {
  for (const args of [['export', '--help'], ['import', '-h'], ['import', 'backup.json', '--help']]) {
    it(`book-catalogue ${args.join(' ')} prints the usage and exits 0`, async () => {
      const exit = await runMain({ cwd: await temp.make(), args });
      assert.equal(exit.code, 0, exit.stderr);
      assert.match(exit.stdout, /^Usage: book-catalogue/);
      assert.match(exit.stdout, /book-catalogue export/);
      assert.equal(exit.stderr, '');
    });
  }

  it('npm run fuzz -- --help prints its options and runs nothing', { timeout: 60_000 }, async () => {
    const exit = await run(NPM, ['run', '--silent', 'fuzz', '--', '--help']);
    assert.equal(exit.code, 0, exit.stderr);
    assert.match(exit.stdout, /^Usage: npm run fuzz -- \[--seed N\] \[--iterations N\]/);
    assert.doesNotMatch(exit.stdout, /requests, seed/, 'no fuzzing ran');
  });

  it('the crash test (npm run test:crash) takes --help, and an unknown option gets the usage, not a stack trace', { timeout: 60_000 }, async () => {
    // The script itself, without npm run's build step: a rebuild would race the other test files.
    const help = await run(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-cli.ts', '--help']);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: npm run test:crash -- \[--rounds N\] \[--workers N\]/);
    const bad = await run(process.execPath, ['--import', 'tsx', 'test/fixtures/crash-cli.ts', '--round', '3']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^test:crash: Unknown option '--round'/);
    assert.doesNotMatch(bad.stderr, STACK);
  });
});
