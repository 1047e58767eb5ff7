import { spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * Environment for a service the bench loads: every bench client connects from 127.0.0.1, so the
 * per-address limits (SECURITY.md, "Limits") would cap the load itself; they are lifted, as behind a proxy.
 */
export const ONE_CLIENT_ADDRESS = { MAX_CONNECTIONS_PER_ADDRESS: '0', MAX_IN_FLIGHT_PER_ADDRESS: '0', MAX_EVENT_STREAMS_PER_ADDRESS: '0' } as const;

/** `npm run build` in the checkout, so a bench measures the source as it is (each bench's `--no-build` skips it). */
export function buildDist(): void {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: new URL('..', import.meta.url).pathname, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
}

/** A port nothing listens on now, for a service the bench starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once `url` answers, asking every `intervalMs`; rejects if the child exits or after `timeoutMs`. */
export async function waitUntilAnswering(url: string, child: ChildProcess, timeoutMs = 10_000, intervalMs = 50): Promise<void> {
  for (let i = 0; i < timeoutMs / intervalMs; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: server exited with code ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
  throw new Error(`${url}: no answer after ${timeoutMs / 1000} s`);
}

