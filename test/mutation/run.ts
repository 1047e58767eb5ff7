import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFile, cp, mkdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/temp-dirs.ts';
import { mutate, MUTATIONS, type Mutation } from './mutations.ts';
import { failedTests, type FailedTest } from './tap.ts';

/*
 * The mutation check (docs/development.md, "Mutation check"): applies each mutation of
 * mutations.ts, one at a time, to a copy of the working tree, runs only the test files it names,
 * and reports the mutants no test noticed. The checkout itself is never changed: the copy takes
 * every file git would commit (untracked ones too) and the build (dist/), with node_modules linked
 * in. A mutant of the page is built into the copy's dist/public/ (and the original built back after
 * it); a process a test spawns from dist/main.js runs the build, not the mutant. Before the
 * mutants, each set of tests runs once on the unchanged copy, so a failure is the mutant's and not
 * the machine's.
 *
 *   npm run mutate                      every mutation
 *   npm run mutate -- budget journal    those whose name or file holds one of the words
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** A test that runs longer has hung: a mutant must fail a named assertion well within this. */
const TEST_TIMEOUT_MS = 60_000;
/** A run of test files still going after this is killed, and its mutant counted as hung. */
const RUN_LIMIT_MS = 150_000;

interface Run {
  readonly passed: boolean;
  readonly failed: readonly FailedTest[];
  /** Killed at RUN_LIMIT_MS. */
  readonly killed: boolean;
  readonly ms: number;
  readonly output: string;
}

type Verdict = 'killed' | 'survived' | 'accepted' | 'hung' | 'no baseline';

/** The files git would commit and the build, copied to a fresh directory, with node_modules linked. */
async function copyTree(): Promise<string> {
  const dir = await tempDir('book-catalogue-mutants-');
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  for (const file of listed.split('\0')) {
    if (file === '') continue;
    const from = join(ROOT, file);
    // Deleted in the working tree but not yet in the index.
    if (!(await stat(from).catch(() => undefined))?.isFile()) continue;
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await copyFile(from, join(dir, file));
  }
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  if (await stat(join(ROOT, 'dist')).catch(() => undefined)) await cp(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true });
  return dir;
}

/**
 * The page's part of `npm run build`: src/ui/page → dist/public/. A mutant rarely type-checks (a
 * value left unread), so it is emitted whatever the checker says: what is tested is how it runs.
 */
function buildPage(cwd: string): void {
  const tsc = spawnSync(join(cwd, 'node_modules/.bin/tsc'), ['-p', 'src/ui/page', '--noEmitOnError', 'false'], { cwd, encoding: 'utf8' });
  if (tsc.error !== undefined) throw tsc.error;
  execFileSync(process.execPath, ['--import', 'tsx', 'build/page.ts'], { cwd, stdio: 'inherit' });
}

/** The test run under way, so that an interrupted check stops it too (it has a process group of its own). */
let running: ChildProcess | undefined;

/** Runs `tests` (narrowed by `only`) in `cwd` with the TAP reporter; kills the whole process group at RUN_LIMIT_MS. */
function runTests(cwd: string, tests: readonly string[], only: string | undefined): Promise<Run> {
  const args = ['--import', 'tsx', '--test', '--test-reporter=tap', `--test-timeout=${TEST_TIMEOUT_MS}`, ...(only === undefined ? [] : ['--test-name-pattern', only]), ...tests];
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running = child;
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let killed = false;
    const limit = setTimeout(() => {
      killed = true;
      stopRun(child);
    }, RUN_LIMIT_MS);
    child.once('error', fail);
    child.once('close', (code) => {
      clearTimeout(limit);
      running = undefined;
      done({ passed: code === 0, failed: failedTests(output), killed, ms: performance.now() - started, output });
    });
  });
}

/** Kills a test run and whatever it started (a service, a browser): its process group. */
function stopRun(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function verdict(m: Mutation, run: Run): Verdict {
  if (run.passed) return m.why === undefined ? 'survived' : 'accepted';
  if (run.killed || (run.failed.length > 0 && run.failed.every((f) => f.timedOut))) return 'hung';
  return 'killed';
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const groupOf = (m: Mutation): string => JSON.stringify([m.tests, m.only]);
const lastLine = (text: string): string => text.trimEnd().split('\n').at(-1) ?? '';

/** Runs each set of tests the mutants name once on the unchanged tree: the groups that fail there. */
async function baselines(tree: string, chosen: readonly Mutation[]): Promise<Set<string>> {
  const broken = new Set<string>();
  const groups = new Map(chosen.map((m) => [groupOf(m), m]));
  process.stdout.write(`${chosen.length} mutants; first the ${groups.size} sets of tests they name, unchanged\n`);
  for (const [group, m] of groups) {
    const run = await runTests(tree, m.tests, m.only);
    if (run.passed) continue;
    broken.add(group);
    const why = run.failed.length === 0 ? run.output.slice(-2000) : run.failed.map((f) => `  "${f.name}": ${f.error}`).join('\n');
    process.stdout.write(`baseline FAILS: ${m.tests.join(' ')}${m.only === undefined ? '' : ` (${m.only})`}\n${why}\n`);
  }
  return broken;
}

/** Applies one mutant to the tree, runs its tests and puts the file back: what became of it, and why. */
async function tryMutant(tree: string, m: Mutation, original: string): Promise<{ verdict: Verdict; detail: string; ms: number }> {
  const path = join(tree, m.file);
  let run: Run;
  try {
    await writeFile(path, mutate(original, m));
    if (m.buildsPage === true) buildPage(tree);
    run = await runTests(tree, m.tests, m.only);
  } finally {
    await writeFile(path, original);
    if (m.buildsPage === true) buildPage(tree);
  }
  const result = verdict(m, run);
  const first = run.failed.find((f) => !f.timedOut) ?? run.failed[0];
  const detail = {
    killed: first === undefined ? `the tests did not run: ${lastLine(run.output)}` : `by "${first.name}": ${first.error}`,
    hung: run.killed ? `killed after ${seconds(RUN_LIMIT_MS)}` : `by the ${seconds(TEST_TIMEOUT_MS)} test timeout of "${first?.name}"`,
    accepted: m.why as string,
    survived: `no test of ${m.tests.join(', ')} failed`,
    'no baseline': '',
  }[result];
  return { verdict: result, detail, ms: run.ms };
}

async function main(words: readonly string[]): Promise<number> {
  const chosen = MUTATIONS.filter((m) => words.length === 0 || words.some((w) => `${m.name} ${m.file}`.toLowerCase().includes(w.toLowerCase())));
  const started = performance.now();
  // Every snippet is checked before anything runs: a stale list fails at once.
  const originals = new Map<string, string>();
  for (const m of chosen) {
    const text = originals.get(m.file) ?? (await readFile(join(ROOT, m.file), 'utf8'));
    originals.set(m.file, text);
    mutate(text, m);
  }
  const tree = await copyTree();
  const interrupted = (): void => {
    if (running !== undefined) stopRun(running);
    void rm(tree, { recursive: true, force: true }).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  const tally = new Map<Verdict, number>();
  try {
    const broken = await baselines(tree, chosen);
    for (const m of chosen) {
      const { verdict: result, detail, ms } = broken.has(groupOf(m)) ? { verdict: 'no baseline' as const, detail: '', ms: 0 } : await tryMutant(tree, m, originals.get(m.file) as string);
      tally.set(result, (tally.get(result) ?? 0) + 1);
      process.stdout.write(`${result.padEnd(9)} ${seconds(ms).padStart(7)}  ${m.name} (${m.file})${detail === '' ? '' : `\n                   ${detail}`}\n`);
    }
  } finally {
    await rm(tree, { recursive: true, force: true });
  }
  const counts = [...tally].map(([v, n]) => `${n} ${v}`).join(', ');
  process.stdout.write(`${chosen.length} mutants: ${counts}; ${seconds(performance.now() - started)} in all\n`);
  const bad = (tally.get('survived') ?? 0) + (tally.get('hung') ?? 0) + (tally.get('no baseline') ?? 0);
  return bad === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
