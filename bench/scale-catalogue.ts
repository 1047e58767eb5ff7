import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { rssSampler, timed } from './scale-probes.ts';
import { ONE_CLIENT_ADDRESS } from './service-process.ts';

export { writeExport } from './export-file.ts';

/** A large catalogue seeded through `import`, and the built service started on it: what bench:scale and bench:slow-lists share. */
const ROOT = new URL('..', import.meta.url).pathname;
const USERNAME = 'bench';
const PASSWORD = 'bench-password-scale';
const SECRET = 'bench-secret-scale-0123456789abcdef0123456789';

export async function runImport(file: string, dataDir: string): Promise<{ ms: number; peakMb: number }> {
  const start = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'dist/main.js'), 'import', file, '--data-dir', dataDir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const rss = rssSampler(child.pid);
  const [code] = (await once(child, 'exit')) as [number];
  rss.stop();
  if (code !== 0) throw new Error(`import exited with ${code}`);
  return { ms: performance.now() - start, peakMb: rss.max };
}

/**
 * The built service on `dataDir`, logging warnings only; `env` adds settings (MEMORY_BUDGET_MB,
 * METRICS_PORT). With `traceGc`, node runs it with `--trace-gc` (not allowed in NODE_OPTIONS) and
 * its stdout, where V8 reports each collection, is piped: the caller must read it. `dist` names
 * another build to start (a baseline).
 */
export function startService(port: number, dataDir: string, env: Record<string, string> = {}, traceGc = false, dist = join(ROOT, 'dist')): ChildProcess {
  const node = traceGc ? ['--trace-gc'] : [];
  return spawn(process.execPath, [...node, join(dist, 'main.js'), '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir, '--log-level', 'warn'], {
    stdio: ['ignore', traceGc ? 'pipe' : 'ignore', 'inherit'],
    // Every bench client is 127.0.0.1: the per-address limits would count them all as one client.
    env: { ...process.env, ...ONE_CLIENT_ADDRESS, SECRET_TOKEN: SECRET, AUTH_USERNAME: USERNAME, AUTH_PASSWORD: PASSWORD, ...env },
  });
}

/** A token for the service startService started. */
export async function login(port: number): Promise<string> {
  const res = await timed(port, 'POST', '/token', {}, JSON.stringify({ username: USERNAME, password: PASSWORD }), true);
  return (JSON.parse(res.body as string) as { data: { token: string } }).data.token;
}
