import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { benchFlags } from './flags.ts';
import { login, runImport, startService, writeExport } from './scale-catalogue.ts';
import { closeAgent, healthPinger, repeat, timed } from './scale-probes.ts';
import { buildDist, freePort, waitUntilAnswering } from './service-process.ts';

/**
 * `npm run bench:searches`: many searches at once from token holders that each wait for their
 * answer before asking again, and GET /healthz from a process of its own meanwhile. A search scans
 * the whole catalogue (X-Total-Count counts every match) a slice of the event loop at a time; this
 * shows what the other clients wait while many such scans share the loop. With `--baseline DIR`,
 * another build's dist/ runs the same rounds, alternating with this one.
 */
const USAGE = `npm run bench:searches [-- flags]: concurrent searches against the built service, /healthz meanwhile
  --books N        catalogue size (100000)
  --clients N      keep-alive clients, each one search at a time (64; the probes' agent holds 64 connections)
  --duration S     seconds per round (15)
  --rounds N       rounds per build (2)
  --baseline DIR   another build's dist/ to run alternately, in the same sitting
  --no-build       use dist/ as it is
`;
const flags = benchFlags(USAGE, {
  books: { type: 'string', default: '100000' },
  clients: { type: 'string', default: '64' },
  duration: { type: 'string', default: '15' },
  rounds: { type: 'string', default: '2' },
  baseline: { type: 'string' },
  'no-build': { type: 'boolean', default: false },
}, { books: 'count', clients: 'count', duration: 'amount', rounds: 'count' }, { seconds: 'duration' });
const ROOT = new URL('..', import.meta.url).pathname;
/** Every generated title starts with "The" (bench/export-file.ts): each search matches every book. */
const QUERY = '/books?limit=10&q=the';

/** `clients` keep-alive loops of one search each until `until`; the number of searches answered 200. */
async function searchLoops(port: number, token: string, until: number): Promise<number> {
  let answered = 0;
  const auth = { authorization: `Bearer ${token}` };
  const loop = (): Promise<number> =>
    repeat(until, async () => {
      if ((await timed(port, 'GET', QUERY, auth)).status === 200) answered++;
    });
  await Promise.all(Array.from({ length: Number(flags.clients) }, loop));
  return answered;
}

async function round(dist: string, dataDir: string): Promise<string> {
  const port = await freePort();
  const service = startService(port, dataDir, {}, false, dist);
  try {
    await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, service, 60_000);
    const token = await login(port);
    const pinger = await healthPinger(port);
    const seconds = Number(flags.duration);
    const searches = await searchLoops(port, token, performance.now() + seconds * 1000);
    const health = await pinger.stop();
    return `${(searches / seconds).toFixed(1)} searches/s; /healthz p50 ${health.p50Ms.toFixed(1)} ms, p99 ${health.p99Ms.toFixed(1)} ms, max ${health.maxMs.toFixed(0)} ms (${health.count} answers)`;
  } finally {
    service.kill();
    await once(service, 'exit');
  }
}

async function main(): Promise<void> {
  if (!flags['no-build']) buildDist();
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-searches-'));
  try {
    const file = join(workDir, 'books.json');
    const dataDir = join(workDir, 'data');
    await writeExport(file, Number(flags.books));
    await runImport(file, dataDir);
    const builds: [string, string][] = [['this build', join(ROOT, 'dist')]];
    if (flags.baseline !== undefined) builds.push(['baseline', resolve(flags.baseline)]);
    console.log(`${flags.books} books, ${flags.clients} clients searching ${QUERY}, ${flags.duration} s a round`);
    for (let r = 1; r <= Number(flags.rounds); r++) {
      for (const [name, dist] of r % 2 === 1 ? builds : [...builds].reverse()) console.log(`  round ${r}, ${name}: ${await round(dist, dataDir)}`);
    }
  } finally {
    closeAgent();
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
