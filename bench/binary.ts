import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBinary, findBuilder } from '../binary/build-binary.ts';
import { writeExport } from './export-file.ts';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';
import { rssMb } from './scale-probes.ts';
import { buildDist, freePort, waitUntilAnswering } from './service-process.ts';

/**
 * `npm run bench:binary`: start-up (spawn to the first GET /healthz 200) and RSS then, of the
 * single executable against `node dist/main.js` on the Node inside it and on the Node running this
 * bench, on catalogues of 1k and 1M books seeded through `import` (docs/binary.md).
 */
const USAGE = `npm run bench:binary [-- flags]: start-up and RSS of the single executable against node dist/main.js, at 1k and 1M books
  --sizes a,b        these catalogue sizes instead
  --starts N         starts per size and program, interleaved; medians are printed (5)
  --no-build         use dist/ and dist-bin/ as they are
`;
const flags = benchFlags(USAGE, {
  sizes: { type: 'string' },
  starts: { type: 'string', default: '5' },
  'no-build': { type: 'boolean', default: false },
}, { starts: 'count' });
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist/main.js');
const SIZES = flags.sizes !== undefined ? flags.sizes.split(',').map(Number) : [1_000, 1_000_000];
const STARTS = Number(flags.starts);
/** Start-up is a few hundred ms: a poll every 50 ms (the other benches') would round it too coarsely. */
const POLL_MS = 5;
const ENV = { SECRET_TOKEN: 'bench-secret-binary-0123456789abcdef0123456789', AUTH_PASSWORD: 'bench-password-binary' };

interface Program {
  name: string;
  command: string;
  args: readonly string[];
}

interface Start {
  ms: number;
  rssMb: number;
  anonMb: number;
}

/** One start: spawn, poll /healthz until it answers 200, read RSS, SIGTERM, wait for the exit. */
async function start(program: Program, dataDir: string): Promise<Start> {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawn(program.command, [...program.args, '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir, '--log-level', 'warn'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: ENV,
  });
  try {
    const url = `http://127.0.0.1:${port}/healthz`;
    await waitUntilAnswering(url, child, 300_000, POLL_MS);
    const ms = performance.now() - startedAt;
    const figures = { ms, rssMb: rssMb(child.pid), anonMb: rssMb(child.pid, 'RssAnon') };
    const status = (await fetch(url)).status;
    if (status !== 200) throw new Error(`${program.name}: /healthz answered ${status}`);
    return figures;
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await once(child, 'exit');
  }
}

async function seed(workDir: string, books: number): Promise<string> {
  const file = join(workDir, `books-${books}.json`);
  const dataDir = join(workDir, `data-${books}`);
  await writeExport(file, books);
  const imported = spawnSync(process.execPath, [MAIN, 'import', file, '--data-dir', dataDir], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (imported.status !== 0) throw new Error(`import exited with ${imported.status}: ${imported.stderr}`);
  await rm(file);
  return dataDir;
}

const ms = (n: number): string => `${n.toFixed(0)} ms`;
const mb = (n: number): string => `${n.toFixed(0)} MB`;

async function main(): Promise<void> {
  if (!flags['no-build']) buildDist();
  const builder = await findBuilder();
  const { file } = await buildBinary({ root: ROOT, outDir: join(ROOT, 'dist-bin'), builder });
  const programs: Program[] = [
    { name: `binary (Node ${builder.version})`, command: file, args: [] },
    { name: `node ${builder.version} dist/main.js`, command: builder.execPath, args: [MAIN] },
    ...(process.version === builder.version ? [] : [{ name: `node ${process.version} dist/main.js`, command: process.execPath, args: [MAIN] }]),
  ];
  const width = Math.max(...programs.map((p) => p.name.length));
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-bench-binary-'));
  try {
    for (const books of SIZES) {
      const dataDir = await seed(workDir, books);
      const runs = new Map<Program, Start[]>(programs.map((p) => [p, []]));
      // Interleaved, so that a noisy moment on a shared machine falls on every program alike.
      for (let i = 0; i < STARTS; i++) for (const program of programs) runs.get(program)?.push(await start(program, dataDir));
      console.log(`\n${books.toLocaleString('en')} books (median of ${STARTS} starts)`);
      for (const [program, starts] of runs) {
        const at = (pick: (s: Start) => number): number => median(starts.map(pick));
        console.log(`  ${program.name.padEnd(width)}  start-up ${ms(at((s) => s.ms)).padStart(7)}  RSS ${mb(at((s) => s.rssMb)).padStart(6)}, of which anonymous ${mb(at((s) => s.anonMb)).padStart(6)}`);
      }
      await rm(dataDir, { recursive: true, force: true });
    }
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
