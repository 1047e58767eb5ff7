import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros } from './cpu.ts';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';
import { login, runImport, startService, writeExport } from './scale-catalogue.ts';
import { closeAgent, healthPinger, repeat, timed } from './scale-probes.ts';
import { buildDist, freePort, waitUntilAnswering } from './service-process.ts';

/**
 * `npm run bench:compression`: what gzip (docs/contract.md, "Compression") costs and saves on the
 * built service, per catalogue size: the body bytes on the wire and the service's CPU per answer
 * for the full list and a 100-book page, with and without `Accept-Encoding: gzip`. The full list
 * gzip-encoded is measured four ways: the first one (every page compressed as it is sent), the
 * next ones (every page sent as kept), each right after a write (one page compressed anew), and
 * after a write to every page (all compressed anew; the list's CPU alone, the writes' not counted).
 * Then /healthz latency while 4 clients read the full list and 1 writes, in either coding.
 */
const USAGE = `npm run bench:compression [-- flags]: bytes and CPU per answer with and without Accept-Encoding: gzip
  --sizes a,b      catalogue sizes (1000,1000000)
  --rounds N       rounds per figure, each its own batch of answers; the median is printed (3)
  --pages N        100-book pages per batch (1000)
  --duration S     seconds per /healthz phase (5)
  --no-build       use dist/ as it is
`;
const flags = benchFlags(USAGE, {
  sizes: { type: 'string', default: '1000,1000000' },
  rounds: { type: 'string', default: '3' },
  pages: { type: 'string', default: '1000' },
  duration: { type: 'string', default: '5' },
  'no-build': { type: 'boolean', default: false },
}, { rounds: 'count', pages: 'count', duration: 'amount' });
const SIZES = flags.sizes.split(',').map(Number);
const ROUNDS = Number(flags.rounds);
const PAGES = Number(flags.pages);
const DURATION_MS = Number(flags.duration) * 1000;
/** Full lists per batch: about 160 MB of list text, at least 5. */
const LIST_TEXT_PER_BATCH = 160e6;
const GZIP = { 'accept-encoding': 'gzip' };

interface Row {
  answer: string;
  coding: 'identity' | 'gzip';
  /** Body bytes on the wire per answer. */
  bytes: number;
  /** The service's CPU per answer (µs), median of the rounds. */
  cpuMicros: number;
  note: string;
}

interface Health {
  coding: 'identity' | 'gzip';
  p50: number;
  p99: number;
  max: number;
  lists: number;
}

/** Runs `answer` `count` times back to back; the service's CPU per answer and the body bytes of the last. */
async function batch(pid: number | undefined, count: number, answer: () => Promise<{ bytes: number; status: number }>): Promise<{ cpu: number; bytes: number }> {
  const before = cpuMicros(pid) ?? Number.NaN;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const res = await answer();
    if (res.status !== 200) throw new Error(`an answer was ${res.status}`);
    bytes = res.bytes;
  }
  return { cpu: ((cpuMicros(pid) ?? Number.NaN) - before) / count, bytes };
}

async function measure(books: number, workDir: string): Promise<{ rows: Row[]; health: Health[]; listBytes: number }> {
  const file = join(workDir, `books-${books}.json`);
  const dataDir = join(workDir, `data-${books}`);
  await writeExport(file, books);
  await runImport(file, dataDir);
  await rm(file);
  const port = await freePort();
  const service = startService(port, dataDir);
  try {
    await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, service, 300_000);
    const auth = { authorization: await login(port) };
    const pid = service.pid;
    let written = 0;
    // A title never written before: every write changes its page (one that changes nothing writes nothing).
    const write = async (id = 1 + ((written * 7919) % books)): Promise<void> => {
      const res = await timed(port, 'PUT', `/book/${id}`, auth, JSON.stringify({ title: `Written ${written++}` }));
      if (res.status !== 200) throw new Error(`a write was ${res.status}`);
    };
    const list = (headers: Record<string, string>) => () => timed(port, 'GET', '/books', { ...auth, ...headers });
    const page = (headers: Record<string, string>) => {
      let i = 0;
      return () => timed(port, 'GET', `/books?limit=100&after=${Math.floor(books / 2) + (i++ % 50)}`, { ...auth, ...headers });
    };
    const rows: Row[] = [];
    const figure = async (answer: string, coding: Row['coding'], note: string, run: () => Promise<{ cpu: number; bytes: number }>): Promise<void> => {
      const rounds: { cpu: number; bytes: number }[] = [];
      for (let r = 0; r < ROUNDS; r++) rounds.push(await run());
      rows.push({ answer, coding, note, bytes: median(rounds.map((f) => f.bytes)), cpuMicros: median(rounds.map((f) => f.cpu)) });
    };

    // The first list builds every page's text; the first gzip list after it compresses every page.
    const first = await timed(port, 'GET', '/books', auth);
    const listBytes = first.bytes;
    const lists = Math.max(5, Math.round(LIST_TEXT_PER_BATCH / listBytes));
    const cold = await batch(pid, 1, list(GZIP));
    rows.push({ answer: 'full list', coding: 'gzip', bytes: cold.bytes, cpuMicros: cold.cpu, note: 'the first after startup: every page compressed as it is sent (one sample; /proc counts CPU in 10 ms ticks)' });

    await figure('full list', 'identity', `${lists} per round`, () => batch(pid, lists, list({})));
    await figure('full list', 'gzip', `${lists} per round, every page sent as kept`, () => batch(pid, lists, list(GZIP)));
    // A write, then the list: one page rebuilt (and, gzip-encoded, compressed anew). The write's own CPU is in both.
    const afterWrite = (headers: Record<string, string>) => async () => {
      await write();
      return list(headers)();
    };
    await figure('write + full list', 'identity', `${lists} per round`, () => batch(pid, lists, afterWrite({})));
    await figure('write + full list', 'gzip', `${lists} per round, one page compressed anew each`, () => batch(pid, lists, afterWrite(GZIP)));
    // One write in every index page (1024 ids), then the list, whose CPU alone is counted: every
    // page rebuilt and, gzip-encoded, compressed anew. Repeated for at least ~20 MB of list a round.
    const listsAfterEveryPage = Math.max(1, Math.round(20e6 / listBytes));
    const afterEveryPage = (headers: Record<string, string>) => async (): Promise<{ cpu: number; bytes: number }> => {
      let cpu = 0;
      let bytes = 0;
      for (let i = 0; i < listsAfterEveryPage; i++) {
        for (let id = 1; id <= books; id += 1024) await write(id);
        const before = cpuMicros(pid) ?? Number.NaN;
        bytes = (await list(headers)()).bytes;
        cpu += (cpuMicros(pid) ?? Number.NaN) - before;
      }
      return { cpu: cpu / listsAfterEveryPage, bytes };
    };
    const each = `${listsAfterEveryPage} per round, each after ${Math.ceil(books / 1024)} writes (not counted)`;
    await figure('full list after a write to every page', 'identity', `${each}: every page rebuilt`, afterEveryPage({}));
    await figure('full list after a write to every page', 'gzip', `${each}: every page rebuilt and compressed anew`, afterEveryPage(GZIP));
    await figure('100-book page', 'identity', `${PAGES} per round`, () => batch(pid, PAGES, page({})));
    await figure('100-book page', 'gzip', `${PAGES} per round, compressed for each`, () => batch(pid, PAGES, page(GZIP)));

    // 4 clients read the full list back to back and 1 writes (each write leaves a page to compress anew) while /healthz is timed.
    const health: Health[] = [];
    for (const [coding, headers] of [['identity', {}], ['gzip', GZIP]] as const) {
      const pinger = await healthPinger(port);
      const until = performance.now() + DURATION_MS;
      const done = await Promise.all([repeat(until, () => write()), ...[1, 2, 3, 4].map(() => repeat(until, list(headers)))]);
      const summary = await pinger.stop();
      health.push({ coding, p50: summary.p50Ms, p99: summary.p99Ms, max: summary.maxMs, lists: done.slice(1).reduce((a, b) => a + b, 0) });
    }
    return { rows, health, listBytes };
  } finally {
    service.kill('SIGTERM');
    await once(service, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  }
}

const kb = (bytes: number): string => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : bytes >= 1e3 ? `${(bytes / 1e3).toFixed(1)} kB` : `${bytes} B`);
const us = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(0)} ms` : n >= 1000 ? `${(n / 1000).toFixed(1)} ms` : `${n.toFixed(0)} µs`);

function print(books: number, { rows, health, listBytes }: { rows: Row[]; health: Health[]; listBytes: number }): void {
  console.log(`\n${books.toLocaleString('en')} books (full list ${kb(listBytes)}); CPU: the service's user + system time per answer, median of ${ROUNDS} rounds`);
  console.log('| answer | coding | body bytes | CPU per answer | |');
  console.log('|---|---|---:|---:|---|');
  for (const r of rows) console.log(`| ${r.answer} | ${r.coding} | ${kb(r.bytes)} | ${us(r.cpuMicros)} | ${r.note} |`);
  console.log(`\n/healthz while 4 clients read the full list and 1 writes (${DURATION_MS / 1000} s):`);
  for (const h of health) console.log(`  ${h.coding}: p50 ${h.p50.toFixed(1)} ms, p99 ${h.p99.toFixed(1)} ms, max ${h.max.toFixed(1)} ms; ${h.lists} lists`);
}

async function main(): Promise<void> {
  if (!flags['no-build']) buildDist();
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-compression-'));
  try {
    for (const books of SIZES) print(books, await measure(books, workDir));
  } finally {
    closeAgent();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main().catch((err: unknown) => {
  console.error(`bench:compression: ${(err as Error).message}`);
  process.exitCode = 1;
});
