import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';
import { closeAgent, healthPinger, repeat, rssMb, rssSampler, stalledList, timed, type Timed } from './scale-probes.ts';
import { login, runImport, startService, writeExport } from './scale-catalogue.ts';
import { buildDist, freePort, waitUntilAnswering } from './service-process.ts';

/**
 * `npm run bench:scale`: catalogues of 1k, 100k and 1M books (5M with --big) seeded through
 * `import`, the built service started on each, and per size: startup, RSS,
 * GET /books right after a write, /healthz while 4 clients list and 1 writes, keyset pages,
 * searches and the longest stall during them, 60 readers that never read. The targets at 1M
 * (and 5M) are checked and printed.
 */
const USAGE = `npm run bench:scale [-- flags]: the built service on catalogues of 1k, 100k and 1M books
  --big              add 5M books
  --sizes a,b        these sizes instead
  --duration S       seconds per load phase (5)
  --no-build         use dist/ as it is
`;
const flags = benchFlags(USAGE, {
  big: { type: 'boolean', default: false },
  sizes: { type: 'string' },
  duration: { type: 'string', default: '5' },
  'no-build': { type: 'boolean', default: false },
}, { duration: 'amount' });
const SIZES = flags.sizes !== undefined ? flags.sizes.split(',').map(Number) : [1_000, 100_000, 1_000_000, ...(flags.big ? [5_000_000] : [])];
const DURATION_MS = Number(flags.duration) * 1000;
/** The search the figures quote: a word in 1 title in 6 (about 167,000 matches at 1M), all counted. */
const SEARCH = 'silver';
const STALLED_READERS = 60;
/**
 * Keyset pages timed per size, after as many untimed: the route is cold when this phase starts
 * (its first thousands of answers take 2-3x longer while V8 compiles it, at any size), and a p50
 * of ~0.2 ms needs many samples to tell 1.5x apart from noise.
 */
const PAGES = 1000;


interface Figures {
  books: number;
  importMs: number;
  importPeakMb: number;
  startupMs: number;
  idleRssMb: number;
  listFirstByteMs: number;
  listTotalMs: number;
  health: { p50: number; p99: number; max: number };
  writesUnderLoad: number;
  pageP50Ms: number;
  searchP50Ms: number;
  searchStallMs: number;
  stalledRssMb: number;
  stalledHealthy: boolean;
  maxRssMb: number;
}

async function measure(books: number, workDir: string): Promise<Figures> {
  const file = join(workDir, `books-${books}.json`);
  const dataDir = join(workDir, `data-${books}`);
  await writeExport(file, books);
  const imported = await runImport(file, dataDir);
  await rm(file);
  const port = await freePort();
  const startedAt = performance.now();
  const service = startService(port, dataDir);
  try {
    await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, service, 300_000);
    const startupMs = performance.now() - startedAt;
    const rss = rssSampler(service.pid);
    const idleRssMb = rssMb(service.pid);
    const auth = { authorization: await login(port) };
    let written = 0;
    const write = (): Promise<unknown> => timed(port, 'PUT', `/book/${1 + (written++ * 7919) % books}`, auth, JSON.stringify({ year: 2000 + (written % 20) }));

    // GET /books right after a write (the list text of one page is rebuilt, never the whole).
    const firstBytes: number[] = [];
    const totals: number[] = [];
    for (let i = 0; i < 5; i++) {
      await write();
      const list = await timed(port, 'GET', '/books', auth);
      firstBytes.push(list.firstByteMs);
      totals.push(list.totalMs);
    }

    // 4 clients list and 1 writes for DURATION_MS while /healthz is timed.
    const pinger = await healthPinger(port);
    const until = performance.now() + DURATION_MS;
    const [writes] = await Promise.all([repeat(until, write), ...[1, 2, 3, 4].map(() => repeat(until, () => timed(port, 'GET', '/books', auth)))]);
    const health = await pinger.stop();

    // A keyset page from the middle, and a search, each timed sequentially.
    const page = (i: number): Promise<Timed> => timed(port, 'GET', `/books?limit=100&after=${Math.floor(books / 2) + (i % 50)}`, auth);
    for (let i = 0; i < PAGES; i++) await page(i);
    const pages: number[] = [];
    for (let i = 0; i < PAGES; i++) pages.push((await page(i)).totalMs);
    const searchPinger = await healthPinger(port);
    const searches: number[] = [];
    for (let i = 0; i < Math.max(5, Math.min(20, 20_000_000 / books)); i++) searches.push((await timed(port, 'GET', `/books?q=${SEARCH}&limit=100`, auth)).totalMs);
    const searchStallMs = (await searchPinger.stop()).maxMs;

    // Readers that ask for the list after a write and never read it.
    const stalled = [];
    for (let i = 0; i < STALLED_READERS; i++) {
      await write();
      stalled.push(await stalledList(port, auth.authorization));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const stalledRssMb = rssMb(service.pid);
    const stalledHealthy = (await timed(port, 'GET', '/healthz', {})).status === 200;
    for (const socket of stalled) socket.destroy();
    rss.stop();
    return {
      books,
      importMs: imported.ms,
      importPeakMb: imported.peakMb,
      startupMs,
      idleRssMb,
      listFirstByteMs: median(firstBytes),
      listTotalMs: median(totals),
      health: { p50: health.p50Ms, p99: health.p99Ms, max: health.maxMs },
      writesUnderLoad: writes,
      pageP50Ms: median(pages),
      searchP50Ms: median(searches),
      searchStallMs,
      stalledRssMb,
      stalledHealthy,
      maxRssMb: Math.max(rss.max, stalledRssMb),
    };
  } finally {
    service.kill('SIGTERM');
    await once(service, 'exit');
    await rm(dataDir, { recursive: true, force: true });
  }
}

const ms = (n: number): string => `${n.toFixed(n < 1 ? 2 : n < 10 ? 1 : 0)} ms`;
const mb = (n: number): string => `${n.toFixed(0)} MB`;

function print(f: Figures): void {
  console.log(`\n${f.books.toLocaleString('en')} books`);
  console.log(`  import ${ms(f.importMs)}, peak RSS ${mb(f.importPeakMb)}; startup ${ms(f.startupMs)}, idle RSS ${mb(f.idleRssMb)}`);
  console.log(`  GET /books right after a write: first byte ${ms(f.listFirstByteMs)}, total ${ms(f.listTotalMs)} (median of 5)`);
  console.log(`  /healthz while 4 list and 1 writes (${DURATION_MS / 1000} s): p50 ${ms(f.health.p50)}, p99 ${ms(f.health.p99)}, max ${ms(f.health.max)}; ${f.writesUnderLoad} writes`);
  console.log(`  ?limit=100&after=<middle> p50 ${ms(f.pageP50Ms)}; ?q=${SEARCH} p50 ${ms(f.searchP50Ms)}, longest /healthz wait during searches ${ms(f.searchStallMs)}`);
  console.log(`  ${STALLED_READERS} readers that never read: RSS ${mb(f.stalledRssMb)}, service ${f.stalledHealthy ? 'answering' : 'NOT answering'}; max RSS ${mb(f.maxRssMb)}`);
}

/** The targets (docs/performance.md, "Large catalogues"): at 1M books (the page target against the 1k page), and at 5M. */
function check(all: readonly Figures[]): boolean {
  const small = all.find((f) => f.books === 1_000);
  const rows: [string, boolean][] = [];
  for (const f of all) {
    if (f.books === 1_000_000) {
      rows.push([`1M: list first byte after a write ${ms(f.listFirstByteMs)} <= 50 ms`, f.listFirstByteMs <= 50]);
      rows.push([`1M: /healthz p99 under 4 listers + 1 writer ${ms(f.health.p99)} <= 50 ms`, f.health.p99 <= 50]);
      rows.push([`1M: RSS throughout ${mb(f.maxRssMb)} <= 500 MB`, f.maxRssMb <= 500]);
      if (small !== undefined) rows.push([`1M: page p50 ${ms(f.pageP50Ms)} within 1.5x of 1k's ${ms(small.pageP50Ms)}`, f.pageP50Ms <= 1.5 * small.pageP50Ms]);
      rows.push([`1M: search p50 ${ms(f.searchP50Ms)} <= 300 ms`, f.searchP50Ms <= 300]);
      rows.push([`1M: longest wait during searches ${ms(f.searchStallMs)} <= 20 ms`, f.searchStallMs <= 20]);
      rows.push([`1M: ${STALLED_READERS} stalled readers: RSS ${mb(f.stalledRssMb)} <= 500 MB and answering`, f.stalledRssMb <= 500 && f.stalledHealthy]);
    }
    if (f.books === 5_000_000) {
      rows.push([`5M: RSS ${mb(f.maxRssMb)} <= 1.5 GB`, f.maxRssMb <= 1536]);
      rows.push([`5M: import peak RSS ${mb(f.importPeakMb)} <= 1 GB`, f.importPeakMb <= 1024]);
    }
  }
  if (rows.length > 0) console.log('\ntargets');
  for (const [text, ok] of rows) console.log(`  ${ok ? 'PASS' : 'FAIL'} ${text}`);
  return rows.every(([, ok]) => ok);
}

async function main(): Promise<void> {
  if (!flags['no-build']) buildDist();
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-scale-'));
  const all: Figures[] = [];
  try {
    for (const books of SIZES) {
      const figures = await measure(books, workDir);
      print(figures);
      all.push(figures);
    }
  } finally {
    closeAgent();
    await rm(workDir, { recursive: true, force: true });
  }
  process.exitCode = check(all) ? 0 : 1;
}

await main();
