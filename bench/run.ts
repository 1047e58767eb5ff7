import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros } from './cpu.ts';
import { benchFlags } from './flags.ts';
import { runLoadInChild } from './fork-load.ts';
import { median } from './median.ts';
import { buildDist, freePort, ONE_CLIENT_ADDRESS, waitUntilAnswering } from './service-process.ts';
import { SCENARIOS, scenariosNamed, seedBook, type Scenario, type ScenarioContext } from './scenarios.ts';
import { runWrk, wrkAvailable } from './wrk.ts';

/**
 * `npm run bench`: the built service against a bare node:http ceiling server, same generator,
 * alternating rounds (docs/performance.md, "How to read the figures"); with --baseline, against
 * another build (before/after of a change); with --floor, against the floor (bench/floor.ts); with
 * --floor-vs-ceiling, the floor in the service's place.
 */
const USAGE = `npm run bench [-- flags]: the built service against a bare node:http server (or --baseline DIR)
  --scenarios a,b    which scenarios (default: all; fanout is bench:fanout's, on dist/ as built, and
                     not with --baseline, whose default leaves it out)
  --connections N    keep-alive connections (32)
  --duration S       seconds per round (5); --warmup S (1); --rounds N (5)
  --baseline DIR     another build's dist/ instead of the ceiling server: the before/after ratio
  --floor            the floor instead of the ceiling: what the contract asks of each route and
                     nothing else (bench/floor.ts); not with --baseline
  --floor-vs-ceiling the floor in the service's place, against the ceiling: a lower bound on what
                     the contract itself costs, route by route; not with --floor, --baseline or fanout
  --cpu-prof DIR     each server writes a V8 CPU profile on exit, in DIR/service (or DIR/floor) and
                     DIR/ceiling (or DIR/baseline, DIR/floor); bench/profile-summary.ts reads them
  --wrk              use wrk as the generator (--wrk-threads N, 2)
  --log-level L      the service's log level (warn)
  --no-build         use dist/ as it is
`;
/** Not an HTTP scenario: GET /events fan-out (bench/fanout.ts), after the others on a service of its own. */
const FANOUT = 'fanout';
const flags = benchFlags(USAGE, {
  connections: { type: 'string', default: '32' },
  duration: { type: 'string', default: '5' },
  warmup: { type: 'string', default: '1' },
  rounds: { type: 'string', default: '5' },
  wrk: { type: 'boolean', default: false },
  'wrk-threads': { type: 'string', default: '2' },
  scenarios: { type: 'string' },
  'log-level': { type: 'string', default: 'warn' },
  'no-build': { type: 'boolean', default: false },
  'cpu-prof': { type: 'string' },
  baseline: { type: 'string' },
  floor: { type: 'boolean', default: false },
  'floor-vs-ceiling': { type: 'boolean', default: false },
}, { connections: 'count', duration: 'amount', warmup: 'amount', rounds: 'count', 'wrk-threads': 'count' });

const ROOT = new URL('..', import.meta.url).pathname;
const CONNECTIONS = Number(flags.connections);
const DURATION_MS = Number(flags.duration) * 1000;
const WARMUP_MS = Number(flags.warmup) * 1000;
const ROUNDS = Number(flags.rounds);
/** What the service is measured against: the ceiling server, or another build of the service. */
const OTHER = flags.baseline !== undefined ? 'baseline' : flags.floor ? 'floor' : 'ceiling';
/** What is measured against it: the built service, or (--floor-vs-ceiling) the floor server. */
const SUBJECT = flags['floor-vs-ceiling'] ? 'floor' : 'service';
const USERNAME = 'bench';
const PASSWORD = randomBytes(12).toString('base64url');
const SEEDED_BOOKS = 100;

interface Figures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The server's CPU time (user + system) per answer, warm-up included; NaN where /proc is missing. */
  cpuMicrosPerAnswer: number;
  /** Answers with another status than the one expected, plus socket errors. */
  unexpected: number;
  /** Status counts and errors of the round, for the progress line. */
  detail: string;
}

async function post(url: string, body: unknown, token?: string): Promise<{ data: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token !== undefined && { authorization: token }) },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`POST ${url}: ${res.status}`);
  return (await res.json()) as { data: unknown };
}

async function freshToken(base: string): Promise<string> {
  return ((await post(`${base}/token`, { username: USERNAME, password: PASSWORD })).data as { token: string }).token;
}

async function measure(server: ChildProcess, port: number, requests: readonly Buffer[], expected: number, workDir: string): Promise<Figures> {
  const cpuBefore = cpuMicros(server.pid);
  const perAnswer = (answers: number): number => {
    const cpuAfter = cpuMicros(server.pid);
    return cpuBefore === undefined || cpuAfter === undefined ? NaN : (cpuAfter - cpuBefore) / answers;
  };
  if (flags.wrk) {
    const url = `http://127.0.0.1:${port}`;
    const common = { url, connections: CONNECTIONS, threads: Number(flags['wrk-threads']), requests, workDir };
    const warm = await runWrk({ ...common, durationMs: WARMUP_MS });
    const r = await runWrk({ ...common, durationMs: DURATION_MS });
    const wrong = expected < 400 ? r.non2xx : r.requests - r.non2xx;
    return {
      requestsPerSecond: r.requestsPerSecond,
      p50Ms: r.p50Ms,
      p99Ms: r.p99Ms,
      cpuMicrosPerAnswer: perAnswer(warm.requests + r.requests),
      unexpected: wrong + r.socketErrors,
      detail: `non-2xx ${r.non2xx}, socket errors ${r.socketErrors}`,
    };
  }
  const r = await runLoadInChild({ host: '127.0.0.1', port, connections: CONNECTIONS, durationMs: DURATION_MS, warmupMs: WARMUP_MS, requests });
  const right = r.statuses[String(expected)] ?? 0;
  return {
    requestsPerSecond: r.requestsPerSecond,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    cpuMicrosPerAnswer: perAnswer(r.warmupRequests + r.requests + r.drainedRequests),
    unexpected: r.requests - right + r.errors,
    detail: `statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}`,
  };
}

interface Row {
  scenario: Scenario;
  service: Figures[];
  other: Figures[];
}

function summarize(runs: readonly Figures[]): Figures {
  return {
    requestsPerSecond: median(runs.map((f) => f.requestsPerSecond)),
    p50Ms: median(runs.map((f) => f.p50Ms)),
    p99Ms: median(runs.map((f) => f.p99Ms)),
    cpuMicrosPerAnswer: median(runs.map((f) => f.cpuMicrosPerAnswer)),
    unexpected: runs.reduce((sum, f) => sum + f.unexpected, 0),
    detail: '',
  };
}

function printTable(rows: readonly Row[], generator: string, logLevel: string): void {
  const out: string[] = [
    '',
    `generator: ${generator}; ${CONNECTIONS} connections, ${DURATION_MS / 1000} s per round after ${WARMUP_MS / 1000} s warm-up, ` +
      `${ROUNDS} rounds, ${SUBJECT} and ${OTHER} taking turns going first; node ${process.version}, ${cpus().length} CPUs${SUBJECT === 'service' ? `; service --log-level ${logLevel}` : ''}`,
    `req/s and latency: medians over rounds; ratio: median ${SUBJECT} / median ${OTHER}; round ratio: median of each round's ${SUBJECT}/${OTHER}`,
    'CPU µs/answer: the server process\'s user + system CPU time per answer (warm-up included), median over rounds',
    `CPU ratio: median of each round's ${SUBJECT}/${OTHER} CPU µs per answer (a round's two figures are taken minutes apart at most, so a load that comes and goes on the host moves both)`,
    'unexpected: answers with another status than the scenario expects, plus socket errors, all rounds',
    '',
    `| scenario | ${SUBJECT} req/s | ${OTHER} req/s | ratio | round ratio | ${SUBJECT} p50 / p99 ms | ${OTHER} p50 / p99 ms | CPU µs/answer (${SUBJECT} / ${OTHER}) | CPU ratio | unexpected (${SUBJECT} / ${OTHER}) |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const s = summarize(row.service);
    const c = summarize(row.other);
    const roundRatio = median(row.service.map((f, i) => f.requestsPerSecond / (row.other[i] as Figures).requestsPerSecond));
    const cpuRatio = median(row.service.map((f, i) => f.cpuMicrosPerAnswer / (row.other[i] as Figures).cpuMicrosPerAnswer));
    out.push(
      `| ${row.scenario.name} | ${Math.round(s.requestsPerSecond)} | ${Math.round(c.requestsPerSecond)} | ` +
        `${(s.requestsPerSecond / c.requestsPerSecond).toFixed(2)} | ${roundRatio.toFixed(2)} | ${s.p50Ms.toFixed(2)} / ${s.p99Ms.toFixed(2)} | ` +
        `${c.p50Ms.toFixed(2)} / ${c.p99Ms.toFixed(2)} | ${s.cpuMicrosPerAnswer.toFixed(1)} / ${c.cpuMicrosPerAnswer.toFixed(1)} | ${cpuRatio.toFixed(2)} | ${s.unexpected} / ${c.unexpected} |`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

/**
 * Node's flags for a server that writes a CPU profile into `--cpu-prof`'s DIR/`name`, or none.
 * Sampled every 200 µs rather than V8's 1 ms: a few seconds of load then hold enough samples to
 * tell apart costs of a fraction of a microsecond per answer.
 */
function profileFlags(name: string): string[] {
  return flags['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '200', '--cpu-prof-dir', join(flags['cpu-prof'], name)];
}

/** The ceiling or the floor (bench/ceiling.ts), as a process of its own. */
function spawnBare(which: 'ceiling' | 'floor', port: number): ChildProcess {
  return spawn(process.execPath, [...profileFlags(which), '--import', 'tsx', 'bench/ceiling.ts', String(port), which], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
}

function spawnService(dist: string, port: number, dataDir: string, logFd: number, logLevel: string, profileName: string): ChildProcess {
  return spawn(process.execPath, [...profileFlags(profileName), join(dist, 'main.js'), '--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir, '--log-level', logLevel], {
    cwd: ROOT,
    env: { ...process.env, ...ONE_CLIENT_ADDRESS, SECRET_TOKEN: randomBytes(32).toString('base64url'), AUTH_USERNAME: USERNAME, AUTH_PASSWORD: PASSWORD },
    // Request lines (at info) go to a file, as a deployment would send them somewhere; not to this process.
    stdio: ['ignore', logFd, 'inherit'],
  });
}

async function seed(base: string): Promise<number[]> {
  const token = await freshToken(base);
  const ids: number[] = [];
  for (let i = 0; i < SEEDED_BOOKS; i++) ids.push(((await post(`${base}/book`, seedBook(i), token)).data as { id: number }).id);
  return ids;
}

async function main(): Promise<void> {
  if (flags.floor && flags.baseline !== undefined) throw new Error('--floor takes no --baseline: each names what the service is measured against, the floor server or another build (npm run bench:in-process -- --targets floor,DIR,dist measures both)');
  if (flags['floor-vs-ceiling'] && (flags.floor || flags.baseline !== undefined)) throw new Error('--floor-vs-ceiling takes no --floor or --baseline: it measures the floor against the ceiling');
  if (flags.wrk && !wrkAvailable()) throw new Error('--wrk: wrk is not on the PATH');
  const logLevel = flags['log-level'];
  // Fan-out compares a build with itself (streams against none): not in a --baseline run's default list.
  const names = flags.scenarios?.split(',') ?? [...SCENARIOS.map((s) => s.name), ...(flags.baseline === undefined && SUBJECT === 'service' ? [FANOUT] : [])];
  if (flags.baseline !== undefined && names.includes(FANOUT)) throw new Error('fanout takes no --baseline: its ratio compares a build with itself (npm run bench:fanout -- --service DIR/main.js runs it on another build)');
  if (SUBJECT === 'floor' && names.includes(FANOUT)) throw new Error('fanout takes no --floor-vs-ceiling: the floor serves no event stream');
  const scenarios = scenariosNamed(names, [FANOUT]);
  // The floor against the ceiling runs nothing of dist/.
  if (!flags['no-build'] && SUBJECT === 'service') buildDist();
  if (scenarios.length > 0) await httpScenarios(scenarios, logLevel);
  if (!names.includes(FANOUT)) return;
  const fanout = spawnSync(process.execPath, ['--import', 'tsx', 'bench/fanout.ts', '--connections', String(CONNECTIONS)], { cwd: ROOT, stdio: 'inherit' });
  if (fanout.status !== 0) throw new Error('the fan-out scenario failed');
}

/** The HTTP scenarios: the built service (or the floor) against the ceiling, the floor or --baseline, rounds alternating. */
async function httpScenarios(scenarios: readonly Scenario[], logLevel: string): Promise<void> {
  const workDir = await mkdtemp(join(tmpdir(), 'book-catalogue-bench-'));
  const logFile = await open(join(workDir, 'service.log'), 'a');
  const [servicePort, otherPort] = [await freePort(), await freePort()];
  const service = SUBJECT === 'floor' ? spawnBare(SUBJECT, servicePort) : spawnService('dist', servicePort, join(workDir, 'data'), logFile.fd, logLevel, SUBJECT);
  const other = flags.baseline === undefined ? spawnBare(flags.floor ? 'floor' : 'ceiling', otherPort) : spawnService(flags.baseline, otherPort, join(workDir, 'data-baseline'), logFile.fd, logLevel, OTHER);
  try {
    const base = `http://127.0.0.1:${servicePort}`;
    const otherBase = `http://127.0.0.1:${otherPort}`;
    await waitUntilAnswering(`${base}/healthz`, service);
    await waitUntilAnswering(`${otherBase}/healthz`, other);
    const bookIds = await seed(base);
    // A baseline build gets the same books (fresh directory: the same ids) and its own tokens.
    if (flags.baseline !== undefined) await seed(otherBase);
    const rows: Row[] = [];
    for (const scenario of scenarios) {
      const row: Row = { scenario, service: [], other: [] };
      for (let round = 1; round <= ROUNDS; round++) {
        const ctx: ScenarioContext = { host: '127.0.0.1', token: await freshToken(base), username: USERNAME, password: PASSWORD, bookIds };
        const requests = scenario.build(ctx);
        const serviceRound = (): Promise<Figures> => measure(service, servicePort, requests, scenario.expectedStatus, workDir);
        // The ceiling answers 200 to everything; the floor and a baseline answer as the service does.
        const otherRound = async (): Promise<Figures> =>
          flags.baseline === undefined
            ? measure(other, otherPort, requests, OTHER === 'ceiling' ? 200 : scenario.expectedStatus, workDir)
            : measure(other, otherPort, scenario.build({ ...ctx, token: await freshToken(otherBase) }), scenario.expectedStatus, workDir);
        // Whichever server went first in a round came out 7-12% cheaper on a shared host, whatever
        // build it was (docs/performance.md, "Compression"): the first place alternates too.
        const serviceFirst = round % 2 === 1;
        const first = await (serviceFirst ? serviceRound() : otherRound());
        const second = await (serviceFirst ? otherRound() : serviceRound());
        const [a, b] = serviceFirst ? [first, second] : [second, first];
        row.service.push(a);
        row.other.push(b);
        process.stderr.write(
          `${scenario.name} round ${round}: ${SUBJECT} ${Math.round(a.requestsPerSecond)} req/s ${a.cpuMicrosPerAnswer.toFixed(1)} µs CPU/answer (${a.detail}), ` +
            `${OTHER} ${Math.round(b.requestsPerSecond)} req/s ${b.cpuMicrosPerAnswer.toFixed(1)} µs CPU/answer (${b.detail})\n`,
        );
      }
      rows.push(row);
    }
    printTable(rows, flags.wrk ? `wrk (${flags['wrk-threads']} thread${flags['wrk-threads'] === '1' ? '' : 's'})` : 'built-in (bench/load.ts, raw node:net, own process)', logLevel);
  } finally {
    service.kill('SIGTERM');
    other.kill('SIGTERM');
    await Promise.all([service, other].map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
    await logFile.close();
    await rm(workDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
