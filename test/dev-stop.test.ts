import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { killAll, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const temp = tempDirs('book-catalogue-dev-stop-');
const ENV = { SECRET_TOKEN: 'dev-stop-secret-that-is-32-bytes-or-more', AUTH_PASSWORD: 'pw' };
after(async () => {
  await killAll();
  await temp.removeAll();
});

interface Line {
  level: number;
  msg: string;
}

function logLines(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

describe('Ctrl-C stops cleanly when it arrives twice at once (terminal + a relaying supervisor)', () => {
  it('`npm run dev` and Ctrl-C (SIGINT to the whole process group): stopped cleanly, LOCK removed, the next start warns of nothing', { timeout: 120_000 }, async () => {
    const dataDir = await temp.make();
    // Its own process group, as a terminal's foreground job: npm, tsx watch and the service.
    const child = spawn(NPM, ['run', 'dev', '--', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], {
      cwd: ROOT,
      detached: true,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dataDir, npm_config_update_notifier: 'false', ...ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
    const group = child.pid as number;
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (s: string) => {
          stdout += s;
          if (stdout.includes('"msg":"listening on')) resolve();
        });
        void closed.then(() => reject(new Error(`npm run dev ended before listening: ${stdout}${stderr}`)));
      });
      process.kill(-group, 'SIGINT');
      await closed;
    } finally {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Already gone: the expected case.
      }
    }
    const lines = logLines(stdout);
    assert.ok(lines.some((l) => l.msg === 'stopped cleanly'), `stopped cleanly:\n${stdout}${stderr}`);
    assert.equal(existsSync(join(dataDir, 'LOCK')), false, 'the lock is released');
    const next = await startMain({ cwd: dataDir, args: ['--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir], env: ENV });
    assert.deepEqual(
      logLines(next.output().stdout).filter((l) => l.level >= 40),
      [],
      'no stale-lock warning on the next start',
    );
    assert.equal((await next.stop()).code, 0);
  });
});
