import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

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

