import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { benchFlags } from './flags.ts';
import { login, runImport, startService, writeExport } from './scale-catalogue.ts';
import { closeAgent, healthPinger, rssSampler, timed } from './scale-probes.ts';
import { buildDist, freePort, waitUntilAnswering } from './service-process.ts';

/**
 * `npm run bench:slow-lists`: the attack the memory budget's `list_snapshots` consumer answers, on
 * the built service. Slow full-list readers (each takes 1 MiB every 5 s, so no send timeout ever
 * fires), each started on its own committed state: between two of them one book in every index
 * page is written, so every page text the previous reader has still to send is superseded and
 * would stay in memory for it alone. The same rounds are run first with a full-speed reader each
 * (normal use): their peak RSS is the baseline, since the garbage those writes leave grows V8's
 * heap as much with an attacker as without one. Printed: that peak, the attack's peak against it +
 * the budget, the heap, external memory and the budget's total at each peak (scraped from
 * /metrics), /healthz latency during the attack (from a process of its own), the budget's
 * list_snapshots figures, and a normal client's full list at the end.
 */
const USAGE = `npm run bench:slow-lists [-- flags]: slow full-list readers of superseded states against the built service
  --books N        catalogue size (1000000)
  --readers N      slow readers, each on a state the next round of writes supersedes, and as
                   many rounds of normal use before them (60)
  --budget-mb N    MEMORY_BUDGET_MB (256, the default)
  --heap-mb N      the service's --max-old-space-size (default: V8's own, a quarter of the host's
                   memory, which lets garbage grow the heap to a few times what is live before it
                   collects; 384 with --budget-mb 128 at 1M books: docs/performance.md)
  --no-build       use dist/ as it is
`;
const flags = benchFlags(USAGE, {
  books: { type: 'string', default: '1000000' },
  readers: { type: 'string', default: '60' },
  'budget-mb': { type: 'string', default: '256' },
  'heap-mb': { type: 'string' },
  'no-build': { type: 'boolean', default: false },
}, { books: 'count', readers: 'count', 'budget-mb': 'count', 'heap-mb': 'count' });
const BOOKS = Number(flags.books);
const READERS = Number(flags.readers);
const BUDGET_MB = Number(flags['budget-mb']);
/** Ids per index page (src/store/book-index.ts PAGE): one write at this stride touches every page. */
const PAGE = 1024;
const READ_BYTES = 2 ** 20;
const READ_EVERY_MS = 5_000;
/** PUTs in flight at once while every page is written. */
const WRITERS = 32;

/**
 * A GET /books read 1 MiB at a time every 5 s. A cut shows here only once the bytes the kernels
 * still hold for it are read, so what was cut is counted from the service's metrics instead.
 */
async function slowList(port: number, token: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.on('error', () => {});
  socket.pause();
  let allowed = 0;
  let received = 0;
  const pace = setInterval(() => {
    allowed += READ_BYTES;
    socket.resume();
  }, READ_EVERY_MS);
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received >= allowed) socket.pause();
  });
  socket.once('close', () => clearInterval(pace));
  socket.write(`GET /books HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\n\r\n`);
  // Its first bytes say the service has taken its snapshot; anything but a 200 would leave the
  // attack measuring nothing, so it stops the bench.
  socket.resume();
  const [first] = (await once(socket, 'data')) as [Buffer];
  const status = first.toString('latin1', 0, 12);
  if (status !== 'HTTP/1.1 200') throw new Error(`a slow reader's GET /books answered ${JSON.stringify(first.toString('latin1', 0, 80))}`);
  return socket;
}

/** One PUT per index page, WRITERS at a time. */
async function writeEveryPage(port: number, auth: Record<string, string>, round: number): Promise<void> {
  const ids = Array.from({ length: Math.ceil(BOOKS / PAGE) }, (_, key) => Math.max(1, key * PAGE));
  const writer = async (): Promise<void> => {
    for (let id = ids.pop(); id !== undefined; id = ids.pop()) {
      const res = await timed(port, 'PUT', `/book/${id}`, auth, JSON.stringify({ year: 1000 + (round % 1000) }));
      if (res.status !== 200) throw new Error(`PUT /book/${id}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
}

/** What one /metrics scrape says of the budget and of the process's memory, in bytes. */
interface Figures {
  held: number;
  shed: number;
  budgetHeld: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** The list_snapshots figures, the budget's total and the process's memory from a /metrics scrape. */
async function budgetFigures(metricsPort: number): Promise<Figures> {
  const text = (await timed(metricsPort, 'GET', '/metrics', {}, undefined, true)).body as string;
  const read = (series: string): number => Number(new RegExp(`^${series} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  let budgetHeld = 0;
  for (const match of text.matchAll(/^book_catalogue_memory_held_bytes\{consumer="[a-z_]+"\} (\S+)$/gm)) budgetHeld += Number(match[1]);
  return {
    held: read('book_catalogue_memory_held_bytes\\{consumer="list_snapshots"\\}'),
    shed: read('book_catalogue_memory_shed_total\\{consumer="list_snapshots"\\}'),
    budgetHeld,
    rss: read('process_resident_memory_bytes'),
    heapUsed: read('nodejs_heap_size_used_bytes'),
    heapTotal: read('nodejs_heap_size_total_bytes'),
    external: read('nodejs_external_memory_bytes'),
  };
}

/** The full collections V8 reports (`--trace-gc`) in one phase: how many, and the most heap each left. */
interface PhaseCollections {
  count: number;
  mostLiveMb: number;
}

/**
 * Reads the service's stdout for V8's `Mark-Compact <before> (<committed>) -> <after> (<committed>) MB`
 * lines: `<after>` is the live heap, what the process retains once garbage is gone, as opposed to
 * RSS, which holds garbage until V8 chooses to collect it. Counted in the phase set at the time.
 */
function fullCollections(stdout: Readable): { phase: 'normal' | 'attack' | undefined; normal: PhaseCollections; attack: PhaseCollections } {
  const seen = { phase: undefined as 'normal' | 'attack' | undefined, normal: { count: 0, mostLiveMb: 0 }, attack: { count: 0, mostLiveMb: 0 } };
  createInterface({ input: stdout }).on('line', (line) => {
    const after = /Mark-Compact\D*[\d.]+ \([\d.]+\) -> ([\d.]+) \(/.exec(line)?.[1];
    if (after === undefined || seen.phase === undefined) return;
    const phase = seen[seen.phase];
    phase.count++;
    phase.mostLiveMb = Math.max(phase.mostLiveMb, Number(after));
  });
  return seen;
}

/**
 * RSS sampled every 20 ms, and /metrics every 250 ms for the most list_snapshots held and the
 * figures of the scrape that saw the largest RSS (`start`'s until one sees more).
 */
function sampled(pid: number | undefined, metricsPort: number, start: Figures): { readonly rss: { readonly max: number }; readonly mostHeld: number; readonly peak: Figures; stop(): void } {
  const rss = rssSampler(pid);
  let mostHeld = 0;
  let peak = start;
  const scraping = setInterval(() => {
    void budgetFigures(metricsPort).then((f) => {
      mostHeld = Math.max(mostHeld, f.held);
      if (f.rss > peak.rss) peak = f;
    }, () => {});
  }, 250);
  return {
    rss,
    get mostHeld() {
      return mostHeld;
    },
    get peak() {
      return peak;
    },
    stop() {
      rss.stop();
      clearInterval(scraping);
    },
  };
}

const breakdown = (f: Figures): string =>
  `RSS ${mb(f.rss)}: heap used ${mb(f.heapUsed)} of ${mb(f.heapTotal)}, external ${mb(f.external)}; the budget held ${mb(f.budgetHeld)}`;

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MB`;
const ms = (n: number): string => `${n.toFixed(n < 10 ? 1 : 0)} ms`;

async function main(): Promise<void> {
  if (!flags['no-build']) buildDist();
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-slow-lists-'));
  const readers: Socket[] = [];
  try {
    const file = join(workDir, 'books.json');
    const dataDir = join(workDir, 'data');
    await writeExport(file, BOOKS);
    await runImport(file, dataDir);
    await rm(file);
    const port = await freePort();
    const metricsPort = await freePort();
    const heap = flags['heap-mb'] === undefined ? {} : { NODE_OPTIONS: `--max-old-space-size=${flags['heap-mb']}` };
    const service = startService(port, dataDir, { MEMORY_BUDGET_MB: String(BUDGET_MB), METRICS_PORT: String(metricsPort), ...heap }, true);
    const collections = fullCollections(service.stdout as Readable);
    /** The samplers, stopped however the run ends: a timer left running would keep the bench alive. */
    const samplers: (() => void)[] = [];
    try {
      await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, service, 300_000);
      const token = await login(port);
      const auth = { authorization: token };
      const warm = await timed(port, 'GET', '/books', auth);
      const idle = await budgetFigures(metricsPort);
      // Normal use first: the same rounds, each list read at full speed. Every write supersedes a
      // page text the next list rebuilds, and V8 lets that garbage grow the heap towards its limit
      // before it collects (and the allocator keeps what it freed), so RSS after this is what the
      // process takes without an attacker; measured before it, the attack's RSS would be compared
      // with a heap that normal writes grow just as much.
      const normalStarted = performance.now();
      collections.phase = 'normal';
      const normal = sampled(service.pid, metricsPort, idle);
      samplers.push(normal.stop);
      for (let round = 0; round < READERS; round++) {
        const [list] = await Promise.all([timed(port, 'GET', '/books', auth), writeEveryPage(port, auth, round)]);
        if (list.status !== 200) throw new Error(`a normal GET /books answered ${list.status}`);
      }
      normal.stop();
      const normalMs = performance.now() - normalStarted;
      const rssBefore = normal.rss.max;
      collections.phase = 'attack';
      const attacked = sampled(service.pid, metricsPort, idle);
      samplers.push(attacked.stop);
      const rss = attacked.rss;
      const pinger = await healthPinger(port);
      const started = performance.now();
      // Without the budget the service runs out of heap here: say so rather than wait on it.
      let attacking = true;
      const exited = once(service, 'exit').then(([code, signal]) => {
        if (attacking) throw new Error(`the service exited (${signal ?? code}) during the attack; peak RSS ${rss.max.toFixed(0)} MB`);
      });
      const attack = async (): Promise<void> => {
        for (let round = READERS; round < 2 * READERS; round++) {
          readers.push(await slowList(port, token));
          await writeEveryPage(port, auth, round);
        }
      };
      await Promise.race([attack(), exited]);
      attacking = false;
      const attackMs = performance.now() - started;
      collections.phase = undefined;
      const list = await timed(port, 'GET', '/books', auth);
      const health = await pinger.stop();
      for (const stop of samplers) stop();
      const after = await budgetFigures(metricsPort);
      const mostHeld = Math.max(attacked.mostHeld, after.held);
      const complete = list.status === 200 && list.bytes === Number(list.headers['content-length']);
      const budget = BUDGET_MB * 2 ** 20;
      const bound = rssBefore + BUDGET_MB;
      console.log(`\n${BOOKS.toLocaleString('en')} books, GET /books ${mb(warm.bytes)} in ${Math.ceil(BOOKS / PAGE)} pages; MEMORY_BUDGET_MB ${BUDGET_MB}${flags['heap-mb'] === undefined ? '' : `, --max-old-space-size=${flags['heap-mb']}`}`);
      console.log(`  ${READERS} slow readers (1 MiB every 5 s), one PUT per page between list starts: ${(attackMs / 1000).toFixed(0)} s`);
      console.log(`  after one full list: ${breakdown(idle)}`);
      console.log(`  normal use, the same rounds with a full-speed reader each (${(normalMs / 1000).toFixed(0)} s): peak RSS ${rssBefore.toFixed(0)} MB; at the largest RSS a scrape saw, ${breakdown(normal.peak)}`);
      console.log(`  the attack: peak RSS ${rss.max.toFixed(0)} MB (bound: normal use's peak + budget = ${bound.toFixed(0)} MB); at the largest RSS a scrape saw, ${breakdown(attacked.peak)}`);
      const live = (phase: 'normal' | 'attack'): string => {
        const { count, mostLiveMb } = collections[phase];
        return count === 0 ? 'no full collection' : `at most ${mostLiveMb.toFixed(0)} MB after ${count} full collections`;
      };
      console.log(`  live heap (what a full collection leaves, from --trace-gc): normal use ${live('normal')}; the attack ${live('attack')}`);
      console.log(`  list_snapshots held: at most ${mb(mostHeld)} (sampled every 250 ms), ${mb(after.held)} at the end; lists shed ${after.shed} of ${READERS}`);
      console.log(`  /healthz meanwhile: p50 ${ms(health.p50Ms)}, p99 ${ms(health.p99Ms)}, max ${ms(health.maxMs)}`);
      console.log(`  a normal client's GET /books at the end: ${list.status}, ${mb(list.bytes)}${complete ? '' : ' INCOMPLETE'} in ${ms(list.totalMs)}`);
      const rows: [string, boolean][] = [
        [`peak RSS ${rss.max.toFixed(0)} MB <= normal use's peak RSS + budget ${bound.toFixed(0)} MB`, rss.max <= bound],
        [`list_snapshots held ${mb(mostHeld)} <= budget ${mb(budget)}`, mostHeld <= budget],
        [`/healthz p99 ${ms(health.p99Ms)} <= 50 ms`, health.p99Ms <= 50],
        ['a normal client gets the whole list', complete],
      ];
      console.log('\ntargets');
      for (const [text, ok] of rows) console.log(`  ${ok ? 'PASS' : 'FAIL'} ${text}`);
      process.exitCode = rows.every(([, ok]) => ok) ? 0 : 1;
    } finally {
      for (const stop of samplers) stop();
      for (const socket of readers) socket.destroy();
      if (service.exitCode === null && service.signalCode === null) {
        service.kill('SIGTERM');
        await once(service, 'exit');
      }
    }
  } finally {
    closeAgent();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main().catch((err: unknown) => {
  console.error(`bench:slow-lists: ${(err as Error).message}`);
  process.exitCode = 1;
});
