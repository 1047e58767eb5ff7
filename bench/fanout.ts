/**
 * `npm run bench:fanout` (also the last part of `npm run bench`): GET /events fan-out (issue 11).
 * The built service; 32 connections create books for --duration seconds, first with no stream open,
 * then with --streams (200) streams following the feed, held by a child process (so the streams'
 * parsing does not take the load generator's CPU). Prints the write throughput of both runs, their
 * ratio, and the delivery delay per change from its 2xx to its frame at the LAST of the streams to
 * get it (so p99 is over the slowest stream of each change), p50/p99/max; and the CPU each process
 * used, so a run where the load generator or the subscribers starve the service shows as such.
 */
import { fork, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cpuMicros } from './cpu.ts';
import { freePort, waitUntilAnswering } from './service-process.ts';

const { values: flags } = parseArgs({
  options: { follower: { type: 'boolean', default: false }, port: { type: 'string' }, token: { type: 'string' }, connections: { type: 'string', default: '32' }, streams: { type: 'string', default: '200' }, duration: { type: 'string', default: '5' } },
});
const CONNECTIONS = Number(flags.connections);
const STREAMS = Number(flags.streams);
const DURATION_MS = Number(flags.duration) * 1000;
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

/** Creates for DURATION_MS on CONNECTIONS connections; `acked` gets each book id's 2xx time. */
async function load(port: number, token: string, acked: Map<number, number>): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const body = JSON.stringify({ title: 'Fan-out', author: 'Bench', year: 2024 });
  const end = performance.now() + DURATION_MS;
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
  agent.destroy();
  return done / (DURATION_MS / 1000);
}

/**
 * What the subscriber child records over all its streams, cheaply enough that 200 streams at a few
 * thousand changes/s do not take the CPU the service is measured on: per book id, the latest
 * arrival over the streams (the time its `data` chunk reached JavaScript, so a slow reader counts
 * as delay), found by one native `indexOf` per frame; no frame is split into strings or objects.
 */
class Arrivals {
  latest = new Float64Array(1 << 16);
  frames = 0;
  /** Frames whose id was not above the previous frame's on the same stream: must stay 0. */
  outOfOrder = 0;

  record(id: number, at: number): void {
    while (id >= this.latest.length) {
      const grown = new Float64Array(this.latest.length * 2);
      grown.set(this.latest);
      this.latest = grown;
    }
    if (at > (this.latest[id] as number)) this.latest[id] = at;
  }

  /** (book id, latest arrival) for every id some stream received. */
  entries(): [number, number][] {
    const out: [number, number][] = [];
    this.latest.forEach((at, id) => {
      if (at > 0) out.push([id, at]);
    });
    return out;
  }
}

/** Each created frame's change JSON holds this once (the book's own JSON has no "type"), then the id. */
const CREATED_ID = Buffer.from('"type":"created","id":');
const FRAME_END = Buffer.from('\n\n');

/** Scans the complete frames of `chunk` (a partial last frame is kept for the next chunk). */
function streamScanner(arrivals: Arrivals): (chunk: Buffer) => void {
  let partial: Buffer | undefined;
  let previous = -1;
  return (chunk) => {
    const at = performance.timeOrigin + performance.now();
    const text = partial === undefined ? chunk : Buffer.concat([partial, chunk]);
    const complete = text.lastIndexOf(FRAME_END) + FRAME_END.length;
    partial = complete < text.length ? text.subarray(complete) : undefined;
    for (let i = text.indexOf(CREATED_ID); i !== -1 && i < complete; i = text.indexOf(CREATED_ID, i)) {
      i += CREATED_ID.length;
      let id = 0;
      for (let c = text[i] as number; c >= 0x30 && c <= 0x39; c = text[++i] as number) id = id * 10 + c - 0x30;
      if (id <= previous) arrivals.outOfOrder++;
      previous = id;
      arrivals.frames++;
      arrivals.record(id, at);
    }
  };
}

/** A stream following the feed, its created frames recorded in `arrivals`. */
function follow(port: number, token: string, arrivals: Arrivals): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/events', headers: { authorization: token } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /events: ${res.statusCode}`));
      res.on('data', streamScanner(arrivals));
      resolve(() => req.destroy());
    });
    req.on('error', reject);
    req.end();
  });
}

/** What the subscriber child sends back: see Arrivals; `cpuMicros` from its streams being ready to the report. */
interface FollowerReport {
  frames: number;
  outOfOrder: number;
  latest: [number, number][];
  cpuMicros: number;
}

/** A load run with the CPU the service and this process (the load generator) used meanwhile. */
async function measured(servicePid: number | undefined, run: () => Promise<number>): Promise<{ creates: number; serviceCpu: number | undefined; loadCpu: number }> {
  const serviceBefore = cpuMicros(servicePid);
  const loadBefore = process.cpuUsage();
  const creates = await run();
  const serviceAfter = cpuMicros(servicePid);
  const load = process.cpuUsage(loadBefore);
  return { creates, serviceCpu: serviceBefore === undefined || serviceAfter === undefined ? undefined : serviceAfter - serviceBefore, loadCpu: load.user + load.system };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-fanout-'));
  const port = await freePort();
  const child = spawn(process.execPath, [join(ROOT, 'dist/main.js'), '--port', String(port), '--host', '127.0.0.1', '--data-dir', dir], {
    env: { PATH: process.env.PATH ?? '', SECRET_TOKEN: SECRET, AUTH_PASSWORD: 'bench', LOG_LEVEL: 'warn', MAX_EVENT_STREAMS: String(STREAMS + 10) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, child);
    const login = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin","password":"bench"}' });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const alone = await measured(child.pid, () => load(port, token, new Map()));
    const acked = new Map<number, number>();
    const follower = fork(new URL(import.meta.url).pathname, ['--follower', '--port', String(port), '--token', token, '--streams', String(STREAMS)], { execArgv: ['--import', 'tsx'] });
    await new Promise((r) => follower.once('message', r));
    const streamed = await measured(child.pid, () => load(port, token, acked));
    await new Promise((r) => setTimeout(r, 500)); // the last frames in flight
    follower.send('report');
    const report = await new Promise<FollowerReport>((r) => follower.once('message', (m) => r(m as FollowerReport)));
    follower.kill();
    const delays = report.latest.map(([id, at]) => Math.max(0, at - (acked.get(id) ?? at))).sort((a, b) => a - b);
    const fmt = (n: number): string => n.toFixed(1);
    const perSecond = (micros: number | undefined): string => (micros === undefined ? '?' : (micros / DURATION_MS / 1000).toFixed(2));
    process.stdout.write(
      `fan-out: ${CONNECTIONS} connections creating for ${DURATION_MS / 1000} s\n` +
        `  no stream open:    ${Math.round(alone.creates)} creates/s\n` +
        `  ${STREAMS} streams open:  ${Math.round(streamed.creates)} creates/s (${((streamed.creates / alone.creates) * 100).toFixed(0)}% of no-stream)\n` +
        `  frames received:   ${report.frames} of ${acked.size * STREAMS}, ${report.outOfOrder} out of order\n` +
        `  delivery delay (2xx to frame): p50 ${fmt(percentile(delays, 50))} ms, p99 ${fmt(percentile(delays, 99))} ms, max ${fmt(delays.at(-1) ?? NaN)} ms\n` +
        `  CPU s per s, no stream / streams: service ${perSecond(alone.serviceCpu)} / ${perSecond(streamed.serviceCpu)}, ` +
        `load generator ${perSecond(alone.loadCpu)} / ${perSecond(streamed.loadCpu)}, subscribers - / ${perSecond(report.cpuMicros)}\n`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

/** The child: holds the streams, then sends back what they received and the CPU it used. */
async function followAll(): Promise<void> {
  const arrivals = new Arrivals();
  await Promise.all(Array.from({ length: STREAMS }, () => follow(Number(flags.port), flags.token as string, arrivals)));
  const cpuAtReady = process.cpuUsage();
  process.send?.('ready');
  process.once('message', () => {
    const cpu = process.cpuUsage(cpuAtReady);
    const report: FollowerReport = { frames: arrivals.frames, outOfOrder: arrivals.outOfOrder, latest: arrivals.entries(), cpuMicros: cpu.user + cpu.system };
    process.send?.(report, () => process.exit(0));
  });
}

(flags.follower ? followAll() : main()).catch((err: unknown) => {
  process.stderr.write(`bench:fanout: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
