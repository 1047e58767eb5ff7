/**
 * `npm run bench:fanout` (also the last part of `npm run bench`): GET /events fan-out
 * (docs/performance.md, "Fan-out: 200 streams while books are created").
 * The built service; 32 connections create books for --duration seconds with no stream open and as
 * long with --streams (200) streams following the feed, held by a child process (so the streams'
 * parsing does not take the load generator's CPU). The two modes alternate in one-second slices
 * (the streams are opened and closed each time), so a shared machine's load drifting during the run
 * weighs on both alike. `--service PATH` runs another build's main.js (a baseline to compare with).
 * Prints the write throughput of both modes and their ratio (with, as a gauge of the machine's
 * noise, the median and range of the ratio of each slice to its neighbour); the delivery delay per
 * change from its 2xx to its frame at the LAST of the streams to get it (so p99 is over the slowest
 * stream of each change), p50/p99/max; and the CPU each process used, so a run where the load
 * generator or the subscribers starve the service shows as such.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros } from './cpu.ts';
import { benchFlags } from './flags.ts';
import type { FollowerReport } from './fanout-scan.ts';
import type { SubscriberConfig } from './fanout-subscriber.ts';
import { median } from './median.ts';
import { freePort, ONE_CLIENT_ADDRESS, waitUntilAnswering } from './service-process.ts';

const USAGE = `npm run bench:fanout [-- flags]: write throughput with and without GET /events streams open
  (measures dist/ as built: npm run build first; exits 1 if a stream missed, repeated or reordered a
  change: checked between reads, and frame by frame in one read in 64)
  --connections N    keep-alive connections creating books (32)
  --streams N        streams open in the streamed mode (200)
  --duration S       seconds of load per mode, in one-second slices (30: a slice's rate varies
                     by ~17% on a shared machine, so a shorter run's ratio moves by several points)
  --service PATH     another build's main.js instead of dist/main.js (a baseline)
  --cpu-prof DIR     the service writes a V8 CPU profile there on exit
`;
const flags = benchFlags(USAGE, {
  connections: { type: 'string', default: '32' },
  streams: { type: 'string', default: '200' },
  duration: { type: 'string', default: '30' },
  service: { type: 'string' },
  'cpu-prof': { type: 'string' },
}, { connections: 'count', streams: 'count', duration: 'amount' });
const CONNECTIONS = Number(flags.connections);
const STREAMS = Number(flags.streams);
/** --duration seconds of load per mode, in one-second slices that alternate between the modes. */
const SLICES = Math.max(1, Math.round(Number(flags.duration)));
const SLICE_MS = (Number(flags.duration) * 1000) / SLICES;
const ROOT = new URL('..', import.meta.url).pathname;
const SECRET = 'fanout-bench-secret-that-is-32-bytes-long';

function post(agent: Agent, port: number, token: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/book', headers: { authorization: token, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => (res.statusCode === 201 ? resolve((JSON.parse(text) as { data: { id: number } }).data.id) : reject(new Error(`status ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Creates for `ms` on CONNECTIONS connections of `agent`; `acked` gets each book id's 2xx time. Returns the creates. */
async function load(agent: Agent, port: number, token: string, ms: number, acked: Map<number, number>): Promise<number> {
  const body = JSON.stringify({ title: 'Fan-out', author: 'Bench', year: 2024 });
  const end = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const id = await post(agent, port, token, body);
        acked.set(id, performance.timeOrigin + performance.now());
        done++;
      }
    }),
  );
  return done;
}

/** Sends `message` to the subscriber child and resolves with its answer; rejects if it exits instead (a stream it could not open). */
function ask<T>(follower: ChildProcess, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null): void => reject(new Error(`the subscriber child exited (${code}) before answering '${message}'`));
    follower.once('exit', exited);
    follower.once('message', (m) => {
      follower.off('exit', exited);
      resolve(m as T);
    });
    follower.send(message);
  });
}

/** What one mode (no stream / streams open) added up to over its slices. */
class Mode {
  creates = 0;
  ms = 0;
  serviceCpu: number | undefined = 0;
  loadCpu = 0;
  subscriberCpu = 0;
  /** Creates per ms of each slice, in run order. */
  readonly slices: number[] = [];

  /** One slice of load, with the CPU the service and this process (the load generator) used meanwhile. */
  async slice(servicePid: number | undefined, run: () => Promise<number>): Promise<void> {
    const serviceBefore = cpuMicros(servicePid);
    const loadBefore = process.cpuUsage();
    const started = performance.now();
    const creates = await run();
    const ms = performance.now() - started;
    this.creates += creates;
    this.ms += ms;
    this.slices.push(creates / ms);
    const serviceAfter = cpuMicros(servicePid);
    const load = process.cpuUsage(loadBefore);
    this.loadCpu += load.user + load.system;
    this.serviceCpu = this.serviceCpu === undefined || serviceBefore === undefined || serviceAfter === undefined ? undefined : this.serviceCpu + serviceAfter - serviceBefore;
  }

  get perSecond(): number {
    return this.creates / (this.ms / 1000);
  }

  /** CPU seconds per second of this mode's slices. */
  cpu(micros: number | undefined): string {
    return micros === undefined ? '?' : (micros / this.ms / 1000).toFixed(2);
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-fanout-'));
  const port = await freePort();
  const profile = flags['cpu-prof'] === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', flags['cpu-prof']];
  const child = spawn(process.execPath, [...profile, flags.service ?? join(ROOT, 'dist/main.js'), '--port', String(port), '--host', '127.0.0.1', '--data-dir', dir], {
    env: { PATH: process.env.PATH ?? '', ...ONE_CLIENT_ADDRESS, SECRET_TOKEN: SECRET, AUTH_PASSWORD: 'bench', LOG_LEVEL: 'warn', MAX_EVENT_STREAMS: String(STREAMS + 10) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let follower: ChildProcess | undefined;
  try {
    await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, child);
    const login = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin","password":"bench"}' });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    await load(agent, port, token, SLICE_MS, new Map()); // warm-up: JIT, connections, first journal growth
    follower = fork(new URL('./fanout-subscriber.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
    follower.send({ port, token, streams: STREAMS } satisfies SubscriberConfig);
    const alone = new Mode();
    const streamed = new Mode();
    const acked = new Map<number, number>();
    for (let i = 0; i < SLICES; i++) {
      // Alternating order (ABBA…) so a machine getting busier or quieter during the run weighs on both.
      for (const streams of i % 2 === 0 ? [false, true] : [true, false]) {
        if (!streams) {
          await alone.slice(child.pid, () => load(agent, port, token, SLICE_MS, new Map()));
          continue;
        }
        await ask(follower, 'open');
        await streamed.slice(child.pid, () => load(agent, port, token, SLICE_MS, acked));
        await new Promise((r) => setTimeout(r, 250)); // the last frames in flight
        streamed.subscriberCpu += await ask<number>(follower, 'close');
      }
    }
    agent.destroy();
    const report = await ask<FollowerReport>(follower, 'report');
    // Slice i of one mode ran next to slice i of the other: their ratio, pair by pair.
    const pairs = streamed.slices.map((rate, i) => rate / (alone.slices[i] as number));
    const delays = report.latest.map(([id, at]) => Math.max(0, at - (acked.get(id) ?? at))).sort((a, b) => a - b);
    const fmt = (n: number): string => n.toFixed(1);
    process.stdout.write(
      `fan-out: ${CONNECTIONS} connections creating, ${SLICES} slices of ${SLICE_MS / 1000} s with no stream and ${SLICES} with ${STREAMS} streams open, alternating\n` +
        `  no stream open:    ${Math.round(alone.perSecond)} creates/s\n` +
        `  ${STREAMS} streams open:  ${Math.round(streamed.perSecond)} creates/s (${((streamed.perSecond / alone.perSecond) * 100).toFixed(0)}% of no-stream; ` +
        `slice pairs: median ${(median(pairs) * 100).toFixed(0)}%, ${(Math.min(...pairs) * 100).toFixed(0)}–${(Math.max(...pairs) * 100).toFixed(0)}%)\n` +
        `  frames received:   ${report.frames} of ${acked.size * STREAMS}, ${report.breaks} reads out of sequence (a gap, repeat or reorder)\n` +
        `  delivery delay (2xx to frame): p50 ${fmt(percentile(delays, 50))} ms, p99 ${fmt(percentile(delays, 99))} ms, max ${fmt(delays.at(-1) ?? NaN)} ms\n` +
        `  CPU s per s, no stream / streams: service ${alone.cpu(alone.serviceCpu)} / ${streamed.cpu(streamed.serviceCpu)}, ` +
        `load generator ${alone.cpu(alone.loadCpu)} / ${streamed.cpu(streamed.loadCpu)}, subscribers - / ${streamed.cpu(streamed.subscriberCpu)}\n`,
    );
    if (report.frames !== acked.size * STREAMS || report.breaks > 0) {
      process.stderr.write('bench:fanout: a stream missed, repeated or reordered changes\n');
      process.exitCode = 1;
    }
  } finally {
    follower?.kill();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:fanout: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
