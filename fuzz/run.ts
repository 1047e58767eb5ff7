/**
 * `npm run fuzz -- [--seed N] [--iterations N]`: mutated requests against the service in-process,
 * checked after each (envelope, 2xx/4xx only, server up, books = what acknowledged writes imply).
 */
import { parseArgs } from 'node:util';
import { describeFailure, fuzz, FuzzFailure, type FuzzReport } from './fuzzer.ts';
import { startFuzzTarget } from './target.ts';

function wholeNumber(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d{1,10}$/.test(text)) throw new Error(`--${name} must be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

function figures(r: FuzzReport): string {
  const sorted = (m: Record<string, number>): string =>
    Object.entries(m)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
  return [
    `fuzz: ${r.iterations} requests, seed ${r.seed}: all passed`,
    `time: ${(r.durationMs / 1000).toFixed(2)} s (${Math.round((r.iterations / r.durationMs) * 1000)} requests/s), ${r.connections} connections`,
    `statuses: ${sorted(r.statuses)}`,
    `kinds: ${sorted(r.kinds)}`,
    `acknowledged writes: ${r.acknowledged.created} created, ${r.acknowledged.updated} updated, ${r.acknowledged.deleted} deleted; ${r.booksAtEnd} books at the end`,
    `model = GET /books at ${r.checkpoints} checkpoints`,
  ].join('\n');
}

const USAGE = `Usage: npm run fuzz -- [--seed N] [--iterations N]

Sends seeded, mutated requests to the service in-process and checks every answer.
  --seed N        the random seed (default: a random one, printed first)
  --iterations N  how many requests (default 20000)
  -h, --help      print this help
A failure prints the seed, the request bytes and a command that replays it.
`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, iterations: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help === true) {
    process.stdout.write(USAGE);
    return;
  }
  const seed = wholeNumber('seed', values.seed, Math.floor(Math.random() * 2 ** 32)) >>> 0;
  const iterations = wholeNumber('iterations', values.iterations, 20_000);
  process.stdout.write(`fuzz: seed ${seed}, ${iterations} iterations\n`);
  const { target, close } = await startFuzzTarget();
  try {
    process.stdout.write(`${figures(await fuzz(target, { seed, iterations }))}\n`);
  } catch (err) {
    if (!(err instanceof FuzzFailure)) throw err;
    process.stderr.write(`${describeFailure(err)}\n`);
    process.exitCode = 1;
  } finally {
    await close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`fuzz: ${(err as Error).message} (see --help)\n`);
  process.exitCode = 1;
});
