import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchFlags } from './flags.ts';
import { runLoadInChild } from './fork-load.ts';
import { median } from './median.ts';
import { httpRequest } from './scenarios.ts';
import { runWrk, wrkAvailable } from './wrk.ts';

/**
 * Checks the built-in generator against wrk (it should reach at least 90% of wrk's req/s, or its
 * figures would measure the generator) on the
 * ceiling server, in alternating rounds: built-in, wrk -t1, wrk -t2, … and prints the medians.
 */
const flags = benchFlags('node --import tsx bench/compare.ts [--connections 32] [--duration S (5)] [--rounds 5]: the built-in generator against wrk\n', {
  connections: { type: 'string', default: '32' },
  duration: { type: 'string', default: '5' },
  rounds: { type: 'string', default: '5' },
}, { connections: 'count', duration: 'amount', rounds: 'count' });
const CONNECTIONS = Number(flags.connections);
const DURATION_MS = Number(flags.duration) * 1000;
const WARMUP_MS = 1000;

async function main(): Promise<void> {
  if (!wrkAvailable()) throw new Error('wrk is not on the PATH');
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-compare-'));
  const ceiling = spawn(process.execPath, ['--import', 'tsx', 'bench/ceiling.ts', '0'], { cwd: new URL('..', import.meta.url).pathname, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise<number>((resolve) => ceiling.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    const requests = [httpRequest('GET', '/books', '127.0.0.1', { authorization: 'x'.repeat(150) })];
    const figures: Record<string, number[]> = { 'built-in': [], 'wrk -t1': [], 'wrk -t2': [] };
    for (let round = 1; round <= Number(flags.rounds); round++) {
      const own = await runLoadInChild({ host: '127.0.0.1', port, connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: WARMUP_MS, requests });
      figures['built-in']!.push(own.requestsPerSecond);
      for (const threads of [1, 2]) {
        const common = { url: `http://127.0.0.1:${port}`, connections: CONNECTIONS, threads, requests, workDir };
        await runWrk({ ...common, durationMs: WARMUP_MS });
        figures[`wrk -t${threads}`]!.push((await runWrk({ ...common, durationMs: DURATION_MS })).requestsPerSecond);
      }
      process.stderr.write(`round ${round}: ${Object.entries(figures).map(([k, v]) => `${k} ${Math.round(v.at(-1) as number)}`).join(', ')}\n`);
    }
    const medians = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, median(v)]));
    const bestWrk = Math.max(medians['wrk -t1'] as number, medians['wrk -t2'] as number);
    process.stdout.write(
      `\nceiling server, ${CONNECTIONS} connections, ${DURATION_MS / 1000} s rounds, medians of ${flags.rounds}:\n` +
        Object.entries(medians).map(([k, v]) => `  ${k}: ${Math.round(v)} req/s\n`).join('') +
        `  built-in / best wrk: ${((medians['built-in'] as number) / bestWrk).toFixed(3)}\n`,
    );
  } finally {
    ceiling.kill('SIGTERM');
    await rm(workDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench compare: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
