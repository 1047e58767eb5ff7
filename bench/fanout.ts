/**
 * `npm run bench:fanout` (also the last part of `npm run bench`): GET /events fan-out (issue 11).
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
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMicros } from './cpu.ts';
import { benchFlags } from './flags.ts';
import { median } from './median.ts';
import { freePort, waitUntilAnswering } from './service-process.ts';

const USAGE = `npm run bench:fanout [-- flags]: write throughput with and without GET /events streams open
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
  // The subscriber child's own flags (it is this script, forked).
  follower: { type: 'boolean', default: false },
  port: { type: 'string' },
  token: { type: 'string' },
});
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

/**
 * What the subscriber child records over all its streams, cheaply enough that 200 streams at a few
 * thousand changes/s do not take the CPU the service is measured on (the child shares the machine).
 * The bench only creates and a stream gets every change in order, so the frames of one read are
 * for consecutive book ids: per read it keeps the first and the last id of its complete frames and
 * the time the read reached JavaScript (a slow reader counts as delay), found by two native
 * searches whatever the number of frames. Each id's arrival at the last stream to get it is worked
 * out at the end, outside the measured slices.
 */
class Arrivals {
  /** Per read: first id, last id, arrival time. */
  readonly #reads: number[] = [];
  frames = 0;
  /** Reads that do not continue their stream's previous one (a gap, a repeat, a reorder): must stay 0. */
  breaks = 0;

  record(first: number, last: number, at: number): void {
    this.#reads.push(first, last, at);
    this.frames += last - first + 1;
  }

  /** (book id, latest arrival) for every id some stream received. */
  entries(): [number, number][] {
    const reads = this.#reads;
    let top = 0;
    for (let i = 0; i < reads.length; i += 3) top = Math.max(top, reads[i + 1] as number);
    const latest = new Float64Array(top + 1);
    for (let i = 0; i < reads.length; i += 3) {
      const at = reads[i + 2] as number;
      for (let id = reads[i] as number; id <= (reads[i + 1] as number); id++) if (at > (latest[id] as number)) latest[id] = at;
    }
    const out: [number, number][] = [];
    latest.forEach((at, id) => {
      if (at > 0) out.push([id, at]);
    });
    return out;
  }
}

/** Each created frame's change JSON holds this once (the book's own JSON has no "type"), then the id. */
const CREATED_ID = Buffer.from('"type":"created","id":');
const FRAME_END = Buffer.from('\n\n');
/** A frame's first byte (`id: `); chunk framing between frames is hex digits and CRLF, never this. */
const ID_START = 0x69;

/** The decimal id that starts at `at` in `text`. */
function idAt(text: Buffer, at: number): number {
  let id = 0;
  for (let c = text[at] as number; c >= 0x30 && c <= 0x39; c = text[++at] as number) id = id * 10 + c - 0x30;
  return id;
}

/** Records the complete frames of each read of one stream (a partial last frame waits for the next read). */
function streamScanner(arrivals: Arrivals): (chunk: Buffer) => void {
  let partial: Buffer | undefined;
  let previous: number | undefined;
  return (chunk) => {
    const at = performance.timeOrigin + performance.now();
    const text = partial === undefined ? chunk : Buffer.concat([partial, chunk]);
    const end = text.lastIndexOf(FRAME_END);
    const complete = end === -1 ? 0 : end + FRAME_END.length;
    // Kept (copied: `text` may be the reused read buffer) only when a frame starts in it, at its
    // `id:`; after a chunked write it is only the chunk's CRLF (RFC 9112 §7.1), and joining that to
    // the next read would copy every read once more.
    partial = text.includes(ID_START, complete) ? Buffer.from(text.subarray(complete)) : undefined;
    const firstAt = text.indexOf(CREATED_ID);
    if (firstAt === -1 || firstAt >= complete) return;
    const first = idAt(text, firstAt + CREATED_ID.length);
    const last = idAt(text, text.lastIndexOf(CREATED_ID, complete - 1) + CREATED_ID.length);
    if ((previous !== undefined && first !== previous + 1) || last < first) arrivals.breaks++;
    previous = last;
    arrivals.record(first, last, at);
  };
}

/** Shared by every stream of the child: a read is scanned before the next one can start. */
const READ_BUFFER = Buffer.allocUnsafe(1 << 20);

/**
 * A stream following the feed, its created frames recorded in `arrivals`. A raw socket, not
 * node:http's client: what the child costs per read is what it takes from the service's CPU, and
 * the scan needs no HTTP decoding (the head holds no frame, and a chunk-size line only ever stands
 * between whole frames, since each chunk is one of the service's writes of whole frames). Reads go
 * into one reused buffer (`onread`, as in load.ts): no Buffer allocated per read.
 */
function follow(port: number, token: string, arrivals: Arrivals): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const scan = streamScanner(arrivals);
    let head = true;
    const onread = {
      buffer: READ_BUFFER,
      callback: (n: number): boolean => {
        const chunk = READ_BUFFER.subarray(0, n);
        if (head) {
          head = false;
          const status = chunk.subarray(0, 12).toString('latin1');
          if (status !== 'HTTP/1.1 200') {
            reject(new Error(`GET /events: ${status}`));
            socket.destroy();
            return false;
          }
          resolve(() => socket.destroy());
        }
        scan(chunk);
        return true;
      },
    };
    const socket = connect({ port, host: '127.0.0.1', onread }, () => socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\n\r\n`));
    socket.on('error', reject);
  });
}

/** What the subscriber child sends back at the end: see Arrivals. */
interface FollowerReport {
  frames: number;
  breaks: number;
  latest: [number, number][];
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
    env: { PATH: process.env.PATH ?? '', SECRET_TOKEN: SECRET, AUTH_PASSWORD: 'bench', LOG_LEVEL: 'warn', MAX_EVENT_STREAMS: String(STREAMS + 10) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  let follower: ChildProcess | undefined;
  try {
    await waitUntilAnswering(`http://127.0.0.1:${port}/healthz`, child);
    const login = await fetch(`http://127.0.0.1:${port}/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"username":"admin","password":"bench"}' });
    const token = ((await login.json()) as { data: { token: string } }).data.token;
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    await load(agent, port, token, SLICE_MS, new Map()); // warm-up: JIT, connections, first journal growth
    follower = fork(new URL(import.meta.url).pathname, ['--follower', '--port', String(port), '--token', token, '--streams', String(STREAMS)], { execArgv: ['--import', 'tsx'] });
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
        `  frames received:   ${report.frames} of ${acked.size * STREAMS}, ${report.breaks} reads not continuing their stream's last\n` +
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

/**
 * The child: on 'open' opens the streams, on 'close' closes them and answers with the CPU it used
 * while they were open, on 'report' sends what every stream received and exits.
 */
function followAll(): void {
  const arrivals = new Arrivals();
  let open: (() => void)[] = [];
  let cpuAtOpen = process.cpuUsage();
  process.on('message', (message) => {
    void (async () => {
      if (message === 'open') {
        open = await Promise.all(Array.from({ length: STREAMS }, () => follow(Number(flags.port), flags.token as string, arrivals)));
        cpuAtOpen = process.cpuUsage();
        process.send?.('open');
      } else if (message === 'close') {
        const cpu = process.cpuUsage(cpuAtOpen);
        for (const close of open) close();
        process.send?.(cpu.user + cpu.system);
      } else {
        const report: FollowerReport = { frames: arrivals.frames, breaks: arrivals.breaks, latest: arrivals.entries() };
        process.send?.(report, () => process.exit(0));
      }
    })();
  });
}

if (flags.follower) {
  followAll();
} else {
  main().catch((err: unknown) => {
    process.stderr.write(`bench:fanout: ${(err as Error).message}\n`);
    process.exitCode = 1;
  });
}
