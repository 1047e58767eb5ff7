import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { access, constants, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { fences } from './helpers/readme-blocks.ts';
import { findTool, needs } from './helpers/system-tools.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const temp = tempDirs('book-catalogue-systemd-');
after(() => temp.removeAll());

function run(command: string, args: readonly string[], options: { cwd: string; env?: Record<string, string> }): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env: { ...process.env, npm_config_update_notifier: 'false', ...options.env } }, (err, stdout, stderr) =>
      err === null ? resolve({ stdout, stderr }) : reject(new Error(`${command} ${args.join(' ')} failed: ${stderr || err.message}`)),
    );
  });
}

/** The systemd steps of docs/operations.md, from the install up to the verify (the rest needs a running systemd). */
async function documentedSteps(): Promise<string[]> {
  const page = await readFile(join(ROOT, 'docs/operations.md'), 'utf8');
  const start = page.indexOf('\n## Running under systemd\n');
  assert.ok(start !== -1, 'docs/operations.md has the systemd section');
  const section = page.slice(start);
  const block = fences(section).find((f) => f.lang === 'sh');
  assert.ok(block, 'the systemd section has its steps');
  const steps = block.lines.filter((l) => l.trim() !== '');
  const verify = steps.findIndex((l) => l.startsWith('systemd-analyze verify'));
  assert.ok(verify > 0, 'the steps verify the unit before starting it');
  return steps.slice(0, verify + 1);
}

describe('the systemd unit the steps of docs/operations.md write verifies (systemd-analyze verify)', needs('systemd-analyze'), () => {
  it('installed with npm into a prefix other than /usr/local (as Debian\'s Node has /usr), the unit runs the installed binary', { timeout: 180_000 }, async () => {
    const work = await temp.make();
    const packed = JSON.parse((await run(NPM, ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: ROOT })).stdout) as { filename: string }[];
    const tarball = join(work, (packed[0] as { filename: string }).filename);
    const prefix = join(work, 'prefix');
    const etc = join(work, 'etc');
    await mkdir(join(etc, 'systemd', 'system'), { recursive: true });
    // The steps as written, with the system paths moved into the sandbox and analyze's path pinned.
    const script = (await documentedSteps())
      .map((l) =>
        l
          .replace(/\.\/book-catalogue-[\d.]+\.tgz/g, `'${tarball}'`)
          .replaceAll('/etc/', `${etc}/`)
          .replace(/^systemd-analyze /, `'${findTool('systemd-analyze')}' `),
      )
      .join('\n');
    await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: work,
      env: { npm_config_prefix: prefix, npm_config_cache: join(work, 'npm-cache'), npm_config_audit: 'false', npm_config_fund: 'false' },
    });
    const unit = await readFile(join(etc, 'systemd', 'system', 'book-catalogue.service'), 'utf8');
    const execStart = /^ExecStart=(.*)$/m.exec(unit)?.[1];
    assert.equal(execStart, join(prefix, 'bin', 'book-catalogue'));
    await access(execStart, constants.X_OK);
  });
});
