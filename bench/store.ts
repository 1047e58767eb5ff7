/**
 * `npm run bench:store`: the store alone (openStore, no HTTP) at 1k, 100k and 1M books. Each size
 * runs in its own process so RSS and startup are that size's own. Per size: startup time, create
 * throughput and p50/p99 latency with 1 and 64 concurrent writers, a compaction under 64 writers,
 * the longest event-loop stall (perf_hooks monitorEventLoopDelay) overall and during compaction,
 * and RSS. Catalogues are seeded by writing a snapshot directly with the store's own writer.
 * Then, in two more processes, the journal is grown to just under the compaction threshold and
 * the store opened again: the longest startup replay and its RSS.
 * Options: --sizes 1000,100000,1000000 --ops 600 (creates with 1 writer; 8x that with 64 writers, 4x during the compaction).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { bookJson } from '../src/model/book.ts';
import { nodeFileLayer } from '../src/fs/durable-fs.ts';
import { COMPACTION_DEFAULTS } from '../src/store/compaction.ts';
import { writeSnapshot } from '../src/store/snapshot.ts';
import { openStore } from '../src/store/open.ts';
import type { DurableBookStore } from '../src/store/book-store.ts';
import { benchFlags } from './flags.ts';
import { LatencyHistogram, type LatencySummary } from './histogram.ts';

interface WriterResult extends LatencySummary {
  opsPerSec: number;
}

interface SizeResult {
  books: number;
  startupMs: number;
  one: WriterResult;
  many: WriterResult;
  compactionMs: number;
  stallMs: number;
  compactionStallMs: number;
  rssMb: number;
  /** Opening with the longest journal replay: just before a compaction would start. */
  fullStartupMs?: number;
  fullRssMb?: number;
}

function* seedBooks(n: number): Generator<string> {
  for (let id = 1; id <= n; id++) yield bookJson({ id, title: `Seeded title number ${id}`, author: `Author ${id % 9973}`, year: 1800 + (id % 225) });
}

/** `writers` concurrent loops of creates, `total` creates in all; every create is timed. */
async function creates(store: DurableBookStore, writers: number, total: number): Promise<WriterResult> {
  const h = new LatencyHistogram();
  let left = total;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      while (left-- > 0) {
        const t = performance.now();
        await store.create({ title: 'Benchmark book', author: 'Bench Author', year: 2024 });
        h.record((performance.now() - t) * 1000);
      }
    }),
  );
  return { ...h.summary(), opsPerSec: Math.round(total / ((performance.now() - start) / 1000)) };
}

/** Runs in a fresh process on a seeded directory, so RSS and startup are the store's own. */
async function measure(dir: string, books: number, ops: number): Promise<SizeResult> {
  const t0 = performance.now();
  const store = await openStore(dir);
  const startupMs = performance.now() - t0;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const one = await creates(store, 1, ops);
  const many = await creates(store, 64, ops * 8);
  const writeStallMs = loop.max / 1e6;
  loop.reset();
  const c0 = performance.now();
  await Promise.all([store.compact(), creates(store, 64, ops * 4)]);
  const compactionMs = performance.now() - c0;
  const compactionStallMs = loop.max / 1e6;
  loop.disable();
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  await store.close();
  return { books, startupMs, one, many, compactionMs, stallMs: Math.max(writeStallMs, compactionStallMs), compactionStallMs, rssMb };
}

/** Grows the journal to just under the size that triggers a compaction: the longest replay. */
async function fillJournal(dir: string): Promise<void> {
  const store = await openStore(dir, { compaction: { ratio: Infinity, minBytes: Infinity } });
  const limit = 0.98 * Math.max(COMPACTION_DEFAULTS.minBytes, COMPACTION_DEFAULTS.ratio * store.stats.snapshotBytes);
  for (let wave = 0; store.stats.journalBytes < limit; wave++) {
    await Promise.all(Array.from({ length: 2000 }, (_, i) => store.update(1 + ((wave * 2000 + i) % store.size), { title: `Updated in wave ${wave}` })));
  }
  await store.close();
}

async function openOnly(dir: string): Promise<{ startupMs: number; rssMb: number }> {
  const t0 = performance.now();
  const store = await openStore(dir);
  const startupMs = performance.now() - t0;
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  await store.close();
  return { startupMs, rssMb };
}

function child(mode: string, dir: string, books: number, ops: number): unknown {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', dir, '--mode', mode, '--books', String(books), '--ops', String(ops)];
  const run = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (run.status !== 0) throw new Error(`the ${books}-book ${mode} run failed`);
  return JSON.parse(run.stdout) as unknown;
}

async function seededRun(books: number, ops: number): Promise<SizeResult> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-store-'));
  try {
    await writeSnapshot(nodeFileLayer, dir, { seq: 0, nextId: books + 1 }, seedBooks(books));
    const result = child('run', dir, books, ops) as SizeResult;
    child('fill', dir, books, ops);
    const full = child('open', dir, books, ops) as { startupMs: number; rssMb: number };
    return { ...result, fullStartupMs: full.startupMs, fullRssMb: full.rssMb };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

function table(results: SizeResult[]): string {
  const rows = [
    ['books', 'startup ms', '1 writer ops/s', 'p50 ms', 'p99 ms', '64 writers ops/s', 'p50 ms', 'p99 ms', 'compaction ms', 'max stall ms', 'stall in compaction ms', 'RSS MB', 'startup, full journal ms', 'RSS then MB'],
    ...results.map((r) => [
      r.books.toLocaleString('en-US'),
      fmt(r.startupMs, 0),
      String(r.one.opsPerSec),
      fmt(r.one.p50Ms, 2),
      fmt(r.one.p99Ms, 2),
      String(r.many.opsPerSec),
      fmt(r.many.p50Ms, 2),
      fmt(r.many.p99Ms, 2),
      fmt(r.compactionMs, 0),
      fmt(r.stallMs),
      fmt(r.compactionStallMs),
      fmt(r.rssMb, 0),
      fmt(r.fullStartupMs ?? NaN, 0),
      fmt(r.fullRssMb ?? NaN, 0),
    ]),
  ];
  return rows.map((cells) => `| ${cells.join(' | ')} |`).join('\n').replace(/\n/, `\n|${' --- |'.repeat(rows[0]!.length)}\n`);
}

function verdicts(results: SizeResult[]): string[] {
  const small = results[0];
  const big = results.at(-1);
  if (small === undefined || big === undefined) return [];
  const ratio = big.one.p50Ms / small.one.p50Ms;
  return [
    `p50 create at ${big.books} vs ${small.books}: ${fmt(ratio, 2)}x (target <= 1.5x) ${ratio <= 1.5 ? 'ok' : 'MISSED'}`,
    `longest stall at ${big.books}: ${fmt(big.stallMs)} ms (target <= 50) ${big.stallMs <= 50 ? 'ok' : 'MISSED'}`,
    `startup at ${big.books}: ${fmt(big.startupMs, 0)} ms, ${fmt(big.fullStartupMs ?? NaN, 0)} ms with a full journal (target < 2000) ${Math.max(big.startupMs, big.fullStartupMs ?? 0) < 2000 ? 'ok' : 'MISSED'}`,
    `RSS at ${big.books}: ${fmt(big.rssMb, 0)} MB (target < 500) ${big.rssMb < 500 ? 'ok' : 'MISSED'}`,
  ];
}

const values = benchFlags('npm run bench:store [-- --sizes 1000,100000,1000000] [--ops 600]: the store alone at each size\n', {
  sizes: { type: 'string', default: '1000,100000,1000000' },
  ops: { type: 'string', default: '600' },
  child: { type: 'string' },
  mode: { type: 'string', default: 'run' },
  books: { type: 'string' },
}, { ops: 'count', books: 'count' });
const ops = Number(values.ops);
if (values.child !== undefined) {
  const dir = values.child;
  const modes: Record<string, () => Promise<unknown>> = {
    run: () => measure(dir, Number(values.books), ops),
    fill: () => fillJournal(dir).then(() => ({})),
    open: () => openOnly(dir),
  };
  process.stdout.write(JSON.stringify(await (modes[values.mode] as () => Promise<unknown>)()));
} else {
  const results: SizeResult[] = [];
  for (const size of values.sizes.split(',').map(Number)) {
    process.stderr.write(`measuring ${size} books...\n`);
    results.push(await seededRun(size, ops));
  }
  process.stdout.write(`${table(results)}\n\n${verdicts(results).join('\n')}\n`);
}
