import { accessSync, constants, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * System programs some checks drive for real (the page in Debian's `chromium`, the metrics through
 * `promtool` from Debian's `prometheus`, the systemd unit through `systemd-analyze`, the PostgreSQL
 * store on a throw-away cluster of Debian's `postgresql`). CI installs them (`.ci/run`); elsewhere the checks that
 * need one are skipped, and `npm test` says so in one line (test/run.ts).
 */
export const SYSTEM_TOOLS = {
  chromium: { env: 'CHROMIUM_PATH', names: ['chromium', 'chromium-browser'], debianPackage: 'chromium', checks: 'the web page in a real browser' },
  promtool: { env: 'PROMTOOL_PATH', names: ['promtool'], debianPackage: 'prometheus', checks: 'the /metrics text through promtool' },
  'systemd-analyze': { env: 'SYSTEMD_ANALYZE_PATH', names: ['systemd-analyze'], debianPackage: 'systemd', checks: 'the systemd unit through systemd-analyze verify' },
  // Debian keeps the server's programs out of PATH, in /usr/lib/postgresql/<major>/bin.
  pg_ctl: { env: 'PG_CTL_PATH', names: ['pg_ctl'], debianPackage: 'postgresql', checks: 'the PostgreSQL store (packages/store-postgres)' },
} as const;

/** Debian's server binaries, newest major first. */
function postgresBinDirs(): string[] {
  try {
    return readdirSync('/usr/lib/postgresql')
      .sort((a, b) => Number(b) - Number(a))
      .map((major) => join('/usr/lib/postgresql', major, 'bin'));
  } catch {
    return [];
  }
}

export type SystemTool = keyof typeof SYSTEM_TOOLS;

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The tool's path: its environment override when set, else the first match on PATH; undefined when absent. */
export function findTool(tool: SystemTool): string | undefined {
  const spec = SYSTEM_TOOLS[tool];
  const override = process.env[spec.env];
  if (override !== undefined && override !== '') return executable(override) ? override : undefined;
  const dirs = (process.env.PATH ?? '').split(delimiter);
  for (const dir of tool === 'pg_ctl' ? [...dirs, ...postgresBinDirs()] : dirs) {
    if (dir === '') continue;
    for (const name of spec.names) {
      const candidate = join(dir, name);
      if (executable(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Options for `test()`/`describe()`: skipped, with the reason, when the tool is not installed. */
export function needs(tool: SystemTool): { skip: string | false } {
  const spec = SYSTEM_TOOLS[tool];
  return { skip: findTool(tool) === undefined ? `needs ${tool} (apt-get install ${spec.debianPackage})` : false };
}

/** The one line `npm test` prints when checks will be skipped; undefined when every tool is there. */
export function missingToolsLine(): string | undefined {
  const missing = (Object.keys(SYSTEM_TOOLS) as SystemTool[]).filter((tool) => findTool(tool) === undefined);
  if (missing.length === 0) return undefined;
  const checks = missing.map((tool) => SYSTEM_TOOLS[tool].checks).join(' and ');
  const packages = missing.map((tool) => SYSTEM_TOOLS[tool].debianPackage).join(' ');
  return `Skipping ${checks}: ${missing.join(' and ')} not found. Install with: sudo apt-get install ${packages}`;
}
