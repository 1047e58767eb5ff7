import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Duplex } from 'node:stream';
import { AnswerFramer } from './answer-framer.ts';
import { createCeilingServer } from './ceiling.ts';
import { createFloorServer } from './floor.ts';
import { statMicros } from './cpu.ts';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';
import { SCENARIOS, scenariosNamed, seedBook, type Scenario } from './scenarios.ts';

/**
 * `npm run bench:in-process`: CPU per answer of the request path alone. Each server is fed the
 * bench's requests on in-memory sockets inside its own process, so the figure leaves out the
 * kernel's loopback send (most of an answer's CPU on a real socket, and its noisiest part on a
 * shared host) and shows what the service's code and Node's HTTP layer cost. Targets alternate
 * round by round, each round in a fresh process, as `npm run bench` alternates its servers
 * (docs/performance.md, "Where the microseconds go").
 */
const USAGE = `npm run bench:in-process [-- flags]: CPU per answer on in-memory sockets, no kernel send
  --targets a,b      what to measure, in turn (default: ceiling,floor,dist):
                       ceiling  the bare node:http server of npm run bench (bench/ceiling.ts)
                       floor    its floor: what the contract asks of each route and nothing else
                                (bench/floor.ts)
                       DIR      a build of the service (its dist/ folder, as --baseline takes it)
  --scenarios a,b    the bench's scenarios (default: all six)
  --rounds N         rounds per target (5); --answers N per round (100000), after 20000 not counted
  --connections N    sockets with one request in flight each (32)
  --cpu-prof DIR     each round's process writes a V8 CPU profile in DIR/<target>-<scenario> (a
                     path's slashes made _); bench/profile-summary.ts reads them
`;
const flags = benchFlags(
  USAGE,
  {
    targets: { type: 'string', default: 'ceiling,floor,dist' },
    scenarios: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    answers: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '32' },
    child: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
  { rounds: 'count', answers: 'count', connections: 'count' },
);

const WARMUP = 20_000;
const USERNAME = 'bench';
const PASSWORD = 'in-process-password';
const SECRET = 'in-process-bench-secret-of-32-bytes-or-more';

/** What one round in a child reports. */
interface Round {
  /** CPU µs per answer: the whole process, its main thread, the other threads (GC helpers, libuv's pool). */
  cpu: number;
  main: number;
  others: number;
  statuses: Record<string, number>;
}

/** CPU time per thread of this process in µs, from /proc (Linux); the main thread's id is the pid. */
function threadMicros(): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    const micros = statMicros(`/proc/self/task/${tid}/stat`);
    if (tid === String(process.pid)) main += micros;
    else others += micros;
  }
  return { main, others };
}

/** The service as main.ts builds it for the bench (loopback host names, per-address limits lifted), on a seeded store. */
async function serviceServer(dist: string, dataDir: string): Promise<{ server: Server; token: string }> {
  type Lib = typeof import('../src/index.ts');
  const lib = (await import(join(resolve(dist), 'index.js'))) as Lib;
  const memoryBudget = new lib.MemoryBudget(lib.defaultMemoryBudgetBytes());
  const store = await lib.openStore(dataDir, { memoryBudget });
  for (let i = 0; i < 100; i++) await store.create(seedBook(i));
  const server = lib.createServer({
    store,
    secret: SECRET,
    username: USERNAME,
    password: PASSWORD,
    logger: lib.createLogger({ level: 'warn', write: () => {} }),
    memoryBudget,
    ui: true,
    limits: { maxConnectionsPerAddress: 0, maxInFlightPerAddress: 0 },
    allowedHosts: [...lib.LOOPBACK_HOST_NAMES],
  });
  return { server, token: lib.signToken(USERNAME, Buffer.from(SECRET), Date.now() / 1000) };
}

/**
 * A client connection in memory: what the server writes is framed into answers
 * (bench/answer-framer.ts), and the next request is pushed a turn after each answer, as a socket's
 * next read would arrive.
 */
class MemorySocket extends Duplex {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort: number;
  readonly #framer = new AnswerFramer((status) => this.#done(status));
  /** Which request goes next: the sockets take turns through the list. */
  #next: number;
  readonly #stride: number;
  readonly #requests: readonly Buffer[];
  readonly #answered: (status: string) => boolean;

  constructor(index: number, stride: number, requests: readonly Buffer[], answered: (status: string) => boolean) {
    super();
    this.remotePort = 40_000 + index;
    this.#next = index;
    this.#stride = stride;
    this.#requests = requests;
    this.#answered = answered;
  }

  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.#framer.read(chunk);
    done();
  }
  override _writev(chunks: { chunk: Buffer }[], done: () => void): void {
    for (const { chunk } of chunks) this.#framer.read(chunk);
    done();
  }

  send(): void {
    this.push(this.#requests[this.#next % this.#requests.length]);
  }

  #done(status: string): void {
    if (!this.#answered(status)) return;
    this.#next += this.#stride;
    setImmediate(() => this.send());
  }
}

async function childRound(target: string, scenario: Scenario, answers: number, connections: number): Promise<Round> {
  const dataDir = mkdtempSync(join(tmpdir(), 'book-catalogue-in-process-'));
  try {
    const bare = target === 'ceiling' ? createCeilingServer() : target === 'floor' ? createFloorServer(dataDir) : undefined;
    const { server, token } = bare === undefined ? await serviceServer(target, join(dataDir, 'data')) : { server: bare, token: 'none' };
    const requests = scenario.build({ host: '127.0.0.1', token, username: USERNAME, password: PASSWORD, bookIds: Array.from({ length: 100 }, (_, i) => i + 1) });
    const statuses: Record<string, number> = {};
    let count = 0;
    let start: { cpu: NodeJS.CpuUsage; threads: { main: number; others: number } } | undefined;
    const round = await new Promise<Round>((resolveRound) => {
      const answered = (status: string): boolean => {
        count++;
        if (count > WARMUP) statuses[status] = (statuses[status] ?? 0) + 1;
        if (count === WARMUP) start = { cpu: process.cpuUsage(), threads: threadMicros() };
        if (count < WARMUP + answers) return true;
        if (count === WARMUP + answers && start !== undefined) {
          const cpu = process.cpuUsage(start.cpu);
          const threads = threadMicros();
          resolveRound({
            cpu: (cpu.user + cpu.system) / answers,
            main: (threads.main - start.threads.main) / answers,
            others: (threads.others - start.threads.others) / answers,
            statuses,
          });
        }
        return false;
      };
      for (let i = 0; i < connections; i++) {
        const socket = new MemorySocket(i, connections, requests, answered);
        server.emit('connection', socket);
        socket.send();
      }
    });
    return round;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function parentRun(): void {
  const targets = flags.targets.split(',');
  const names = flags.scenarios?.split(',') ?? SCENARIOS.map((s) => s.name);
  scenariosNamed(names);
  const out = [
    '',
    `in-process: ${flags.connections} in-memory sockets, ${flags.answers} answers per round after ${WARMUP}, ${flags.rounds} rounds alternating ${targets.join(' / ')}; node ${process.version}`,
    'CPU µs per answer, median over rounds: the process (its main thread + other threads); ratio: against the first target',
    '',
    '| scenario | target | CPU µs/answer | main + other threads | ratio | statuses (last round) |',
    '|---|---|---:|---:|---:|---|',
  ];
  for (const name of names) {
    const rounds = new Map<string, Round[]>(targets.map((t) => [t, []]));
    for (let r = 1; r <= Number(flags.rounds); r++) {
      for (const target of targets) {
        const profile = flags['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-interval', '100', '--cpu-prof-dir', join(flags['cpu-prof'], `${target.replace(/^\/+/, '').replace(/[^\w.-]+/g, '_')}-${name}`)];
        const child = spawnSync(process.execPath, [...profile, '--import', 'tsx', 'bench/in-process.ts', '--child', target, '--scenarios', name, '--answers', flags.answers, '--connections', flags.connections], {
          cwd: new URL('..', import.meta.url).pathname,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        if (child.status !== 0) throw new Error(`${target} ${name}: the round's process exited with ${child.status}`);
        const round = JSON.parse(child.stdout) as Round;
        (rounds.get(target) as Round[]).push(round);
        process.stderr.write(`${name} round ${r}: ${target} ${round.cpu.toFixed(2)} µs CPU/answer (main ${round.main.toFixed(2)}, other threads ${round.others.toFixed(2)})\n`);
      }
    }
    const first = median((rounds.get(targets[0] as string) as Round[]).map((x) => x.cpu));
    for (const target of targets) {
      const list = rounds.get(target) as Round[];
      const cpu = median(list.map((x) => x.cpu));
      out.push(
        `| ${name} | ${target} | ${cpu.toFixed(2)} | ${median(list.map((x) => x.main)).toFixed(2)} + ${median(list.map((x) => x.others)).toFixed(2)} | ${(cpu / first).toFixed(2)} | ${JSON.stringify(list.at(-1)?.statuses)} |`,
      );
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

if (flags.child !== undefined) {
  const scenario = SCENARIOS.find((s) => s.name === flags.scenarios) as Scenario;
  const round = await childRound(flags.child, scenario, Number(flags.answers), Number(flags.connections));
  process.stdout.write(`${JSON.stringify(round)}\n`);
  // The servers hold sockets and timers of their own: this process has said what it came for.
  process.exit(0);
} else {
  parentRun();
}

