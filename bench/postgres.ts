/**
 * `npm run bench:postgres`: create, update and read throughput and p99 on the file store, on
 * PostgreSQL with one process, and on PostgreSQL with two processes behind one port, in one run;
 * then list, page and search latencies with 1M books on PostgreSQL. It starts a throw-away
 * PostgreSQL cluster (test/helpers/postgres.ts) and needs `npm run build` and
 * `npm ci --prefix packages/store-postgres` first. Figures are in docs/scaling-out.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signToken } from '../src/auth/jwt.ts';
import { createDatabase, startCluster, storePackage } from '../test/helpers/postgres.ts';
import { runLoadInChild } from './fork-load.ts';
import { LatencyHistogram } from './histogram.ts';
import type { LoadResult } from './load.ts';
import { httpRequest, seedBook } from './scenarios.ts';
import { freePort, ONE_CLIENT_ADDRESS, waitUntilAnswering } from './service-process.ts';

const SECRET = 'bench-postgres-secret-at-least-32-bytes-long';
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const TWO_WORKERS = fileURLToPath(new URL('./two-workers.ts', import.meta.url));
const SEEDED = 1000;
const CONNECTIONS = 16;
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const WARMUP_MS = 1000;
const LARGE = Number(process.env.BENCH_LARGE_BOOKS ?? 1_000_000);

interface Setup {
  name: string;
  /** node's arguments before the service's own. */
  script: string[];
  env: Record<string, string>;
}

async function startService(setup: Setup, dataDir: string): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [...setup.script, '--port', String(port), '--host', '127.0.0.1', '--no-ui', '--data-dir', dataDir], {
    env: { PATH: process.env.PATH ?? '', SECRET_TOKEN: SECRET, AUTH_PASSWORD: 'bench', LOG_LEVEL: 'error', ...ONE_CLIENT_ADDRESS, ...setup.env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitUntilAnswering(`http://127.0.0.1:${port}/readyz`, child, 120_000);
  return { port, child };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

const token = (): string => signToken('admin', Buffer.from(SECRET), Date.now() / 1000);

async function seed(port: number): Promise<void> {
  for (let i = 0; i < SEEDED; i += 100) {
    await Promise.all(
      Array.from({ length: 100 }, (_, j) =>
        fetch(`http://127.0.0.1:${port}/book`, { method: 'POST', headers: { authorization: token(), 'content-type': 'application/json' }, body: JSON.stringify(seedBook(i + j)) }).then((r) => r.arrayBuffer()),
      ),
    );
  }
}

function load(port: number, requests: Buffer[]): Promise<LoadResult> {
  return runLoadInChild({ host: '127.0.0.1', port, connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: WARMUP_MS, requests });
}

function row(setup: string, op: string, r: LoadResult): string {
  const bad = Object.entries(r.statuses).filter(([status]) => !status.startsWith('2'));
  return `| ${setup} | ${op} | ${Math.round(r.requestsPerSecond)} | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} |${bad.length > 0 || r.errors > 0 ? ` non-2xx ${JSON.stringify(Object.fromEntries(bad))}, errors ${r.errors}` : ''}`;
}

async function throughput(setup: Setup): Promise<string[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-postgres-'));
  const { port, child } = await startService(setup, dataDir);
  try {
    await seed(port);
    const host = `127.0.0.1:${port}`;
    const auth = { authorization: token() };
    const ids = Array.from({ length: SEEDED }, (_, i) => i + 1);
    const create = [httpRequest('POST', '/book', host, auth, JSON.stringify(seedBook(7)))];
    const update = ids.map((id) => httpRequest('PUT', `/book/${id}`, host, auth, JSON.stringify({ year: 1000 + (id % 997) })));
    const updateBack = ids.map((id) => httpRequest('PUT', `/book/${id}`, host, auth, JSON.stringify({ year: 2000 + (id % 7) })));
    const read = ids.map((id) => httpRequest('GET', `/book/${id}`, host, auth));
    const rows = [];
    rows.push(row(setup.name, 'create', await load(port, create)));
    // Updates alternate between two years: no update is a no-op (a no-op writes nothing).
    rows.push(row(setup.name, 'update', await load(port, update.flatMap((u, i) => [u, updateBack[i] as Buffer]))));
    rows.push(row(setup.name, 'read one', await load(port, read)));
    return rows;
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Sequential GETs of `path`: p50 and p99 of `runs` answers, read whole. */
async function latency(port: number, path: string, runs: number): Promise<{ p50: number; p99: number; bytes: number }> {
  const histogram = new LatencyHistogram();
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: token(), 'accept-encoding': 'identity' } });
    bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
    histogram.record((performance.now() - start) * 1000);
  }
  const s = histogram.summary();
  return { p50: s.p50Ms, p99: s.p99Ms, bytes };
}

async function largeCatalogue(socketDir: string): Promise<string[]> {
  const url = await createDatabase(socketDir);
  const pg = await storePackage();
  const books = Array.from({ length: LARGE }, (_, i) => JSON.stringify({ id: i + 1, ...seedBook(i) }));
  const seedStart = performance.now();
  await pg.writeDump(url, { books, nextId: LARGE + 1, seq: 0, changes: [] });
  const seeded = (performance.now() - seedStart) / 1000;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-postgres-'));
  const startAt = performance.now();
  const { port, child } = await startService({ name: '', script: [MAIN], env: { STORE_URL: url } }, dataDir);
  const started = (performance.now() - startAt) / 1000;
  try {
    const lines = [`${LARGE} books written into PostgreSQL in ${seeded.toFixed(1)} s; one process loaded them and answered /readyz in ${started.toFixed(1)} s`, '', '| request | p50 ms | p99 ms | answer bytes |', '|---|---|---|---|'];
    for (const [name, path, runs] of [
      ['GET /books (every book)', '/books', 5],
      ['GET /books?limit=100&after=500000 (a page)', '/books?limit=100&after=500000', 200],
      ['GET /books?q=book 77777&limit=20 (search)', `/books?q=${encodeURIComponent('book 77777')}&limit=20`, 20],
      ['GET /book/654321', '/book/654321', 200],
    ] as const) {
      const { p50, p99, bytes } = await latency(port, path, runs);
      lines.push(`| ${name} | ${p50.toFixed(2)} | ${p99.toFixed(2)} | ${bytes} |`);
    }
    return lines;
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const cluster = await startCluster();
  try {
    const setups: Setup[] = [
      { name: 'file store, 1 process', script: [MAIN], env: {} },
      { name: 'PostgreSQL, 1 process', script: [MAIN], env: { STORE_URL: await createDatabase(cluster.dir) } },
      { name: 'PostgreSQL, 2 processes, 1 port', script: ['--import', 'tsx', TWO_WORKERS], env: { STORE_URL: await createDatabase(cluster.dir) } },
    ];
    console.log(`${CONNECTIONS} connections, ${DURATION_MS / 1000} s per figure after ${WARMUP_MS / 1000} s of warm-up, ${SEEDED} books seeded\n`);
    console.log('| setup | operation | requests/s | p50 ms | p99 ms |\n|---|---|---|---|---|');
    for (const setup of setups) for (const line of await throughput(setup)) console.log(line);
    console.log('');
    for (const line of await largeCatalogue(cluster.dir)) console.log(line);
  } finally {
    await cluster.remove();
  }
}

await main();
