/**
 * `node --import tsx bench/store-writes.ts`: the durable write path alone (openStore, no HTTP),
 * as the HTTP bench's update and create scenarios drive it: 32 writers in a closed loop, updates
 * of 100 books or creates. Prints, per round, process CPU µs per write (user + system, the
 * fdatasync's kernel time included), writes/s, records per batch and compactions, so a change to
 * src/store can be judged without the HTTP layer's noise.
 * Options: --writers 32 --ms 3000 --rounds 3 --scenarios update,create
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import type { DurableBookStore } from '../src/store/book-store.ts';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';

const flags = benchFlags('node --import tsx bench/store-writes.ts [--writers 32] [--ms 3000] [--rounds 3] [--scenarios update,create]: the durable write path alone\n', {
  writers: { type: 'string', default: '32' },
  ms: { type: 'string', default: '3000' },
  rounds: { type: 'string', default: '3' },
  scenarios: { type: 'string', default: 'update,create' },
}, { writers: 'count', ms: 'amount', rounds: 'count' });

const BOOKS = 100;
type Write = (store: DurableBookStore, n: number) => Promise<unknown>;
const WRITES: Record<string, Write> = {
  update: (store, n) => store.update(1 + (n % BOOKS), { title: `Updated title ${n}`, year: 1900 + (n % 100) }),
  create: (store, n) => store.create({ title: `Created title ${n}`, author: 'Bench Author', year: 2024 }),
};

interface Round {
  cpuMicrosPerWrite: number;
  writesPerSec: number;
  recordsPerBatch: number;
  compactions: number;
}

async function round(write: Write): Promise<Round> {
  const dir = await mkdtemp(join(tmpdir(), 'store-writes-'));
  const store = await openStore(join(dir, 'data'));
  try {
    for (let i = 0; i < BOOKS; i++) await store.create({ title: `Seed ${i}`, author: 'Seed Author', year: 2000 });
    const before = { ...store.stats };
    const cpu = process.cpuUsage();
    const start = performance.now();
    const until = start + Number(flags.ms);
    let n = 0;
    await Promise.all(
      Array.from({ length: Number(flags.writers) }, async () => {
        while (performance.now() < until) await write(store, n++);
      }),
    );
    const elapsed = performance.now() - start;
    const used = process.cpuUsage(cpu);
    const after = store.stats;
    return {
      cpuMicrosPerWrite: (used.user + used.system) / n,
      writesPerSec: (n * 1000) / elapsed,
      recordsPerBatch: (after.records - before.records) / (after.batches - before.batches),
      compactions: after.compactions - before.compactions,
    };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (const name of flags.scenarios.split(',')) {
    const write = WRITES[name];
    if (write === undefined) throw new Error(`unknown scenario ${name}`);
    const rounds: Round[] = [];
    for (let r = 0; r < Number(flags.rounds); r++) rounds.push(await round(write));
    const m = (pick: (r: Round) => number): string => median(rounds.map(pick)).toFixed(1);
    process.stdout.write(
      `${name}: CPU µs/write ${m((r) => r.cpuMicrosPerWrite)} [${rounds.map((r) => r.cpuMicrosPerWrite.toFixed(1)).join(' ')}], ` +
        `writes/s ${m((r) => r.writesPerSec)}, records/batch ${m((r) => r.recordsPerBatch)}, compactions ${m((r) => r.compactions)}\n`,
    );
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`store-writes: ${(err as Error).stack}\n`);
  process.exitCode = 1;
});
