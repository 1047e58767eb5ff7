import { execFile } from 'node:child_process';
import { join } from 'node:path';

/**
 * Programs some checks fetch from the npm registry at test time, as `test:node24` fetches Node:
 * `npm exec --yes --package=<pinned spec>`, which installs into npm's own cache on the first run
 * and reuses it afterwards. They are never devDependencies: `npm install` stays what it is.
 */
export const NPM_TOOLS = {
  redocly: { spec: '@redocly/cli@2.77.0', checks: 'the OpenAPI document through redocly lint' },
  openapiParser: { spec: '@readme/openapi-parser@9.0.0', checks: 'the OpenAPI document through @readme/openapi-parser' },
} as const;

export type NpmTool = keyof typeof NPM_TOOLS;

const ROOT = join(import.meta.dirname, '..', '..');

/** npm's own error codes that mean the registry could not be reached (not that the tool failed). */
export const UNREACHABLE: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'ENOTCONNECTED', 'ERR_SOCKET_TIMEOUT']);

export type NpmExecResult = { kind: 'ran'; code: number; stdout: string; stderr: string } | { kind: 'unreachable'; line: string };

/**
 * Runs `command` with the tool's package on PATH (`npm exec`), in the repository's root. When npm
 * could not fetch the package because the registry is out of reach, the result is the one line to
 * print: what was skipped and how to get it.
 */
export function npmExec(tool: NpmTool, command: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<NpmExecResult> {
  const { spec, checks } = NPM_TOOLS[tool];
  // One retry, not npm's default two with a minute of back-off: an unreachable registry is told within seconds.
  const npmEnv = { ...process.env, ...env, npm_config_fetch_retries: '1', npm_config_update_notifier: 'false', NO_COLOR: '1' };
  return new Promise((resolve) => {
    // --prefer-offline: a pinned version once in npm's cache is used without asking the registry again.
    execFile('npm', ['exec', '--yes', '--prefer-offline', `--package=${spec}`, '--', ...command], { cwd: ROOT, env: npmEnv, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      const npmCode = /^npm (?:error|ERR!) code (\S+)/m.exec(stderr)?.[1];
      if (code !== 0 && npmCode !== undefined && UNREACHABLE.has(npmCode)) {
        resolve({ kind: 'unreachable', line: `Skipping ${checks}: the npm registry could not be reached (${npmCode}). Run it where the registry is reachable, or fetch it into npm's cache once with: npm exec --yes --package=${spec} -- true` });
      } else {
        resolve({ kind: 'ran', code, stdout, stderr });
      }
    });
  });
}
