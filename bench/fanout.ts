/**
 * `npm run bench:fanout` (also the last part of `npm run bench`): GET /events fan-out (issue 11).
 * The built service; 32 connections create books for --duration seconds, first with no stream open,
 * then with --streams (200) streams following the feed, held by a child process (so the streams'
 * parsing does not take the load generator's CPU). Prints the write throughput of both runs, their
 * ratio, and the delivery delay per change from its 2xx to its frame at the LAST of the streams to
 * get it (so p99 is over the slowest stream of each change), p50/p99/max.
 */
import { fork, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request, Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
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

/** A stream following the feed; `arrivals` gets (book id, arrival time) for each created frame. */
function follow(port: number, token: string, arrivals: [number, number][]): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/events', headers: { authorization: token } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /events: ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        const at = performance.timeOrigin + performance.now();
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const idAt = frame.indexOf('"id":');
          if (frame.includes('event: created') && idAt !== -1) arrivals.push([parseInt(frame.slice(idAt + 5), 10), at]);
        }
      });
      resolve(() => req.destroy());
    });
    req.on('error', reject);
    req.end();
  });
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
    const alone = await load(port, token, new Map());
    const acked = new Map<number, number>();
    const follower = fork(new URL(import.meta.url).pathname, ['--follower', '--port', String(port), '--token', token, '--streams', String(STREAMS)], { execArgv: ['--import', 'tsx'] });
    await new Promise((r) => follower.once('message', r));
    const withStreams = await load(port, token, acked);
    await new Promise((r) => setTimeout(r, 500)); // the last frames in flight
    follower.send('report');
    const report = await new Promise<{ frames: number; latest: [number, number][] }>((r) => follower.once('message', (m) => r(m as { frames: number; latest: [number, number][] })));
    follower.kill();
    const arrivals = { length: report.frames };
    const delays = report.latest.map(([id, at]) => Math.max(0, at - (acked.get(id) ?? at))).sort((a, b) => a - b);
    const expected = acked.size * STREAMS;
    const fmt = (n: number): string => n.toFixed(1);
    process.stdout.write(
      `fan-out: ${CONNECTIONS} connections creating for ${DURATION_MS / 1000} s\n` +
        `  no stream open:    ${Math.round(alone)} creates/s\n` +
        `  ${STREAMS} streams open:  ${Math.round(withStreams)} creates/s (${((withStreams / alone) * 100).toFixed(0)}% of no-stream)\n` +
        `  frames received:   ${arrivals.length} of ${expected}\n` +
        `  delivery delay (2xx to frame): p50 ${fmt(percentile(delays, 50))} ms, p99 ${fmt(percentile(delays, 99))} ms, max ${fmt(delays.at(-1) ?? NaN)} ms\n`,
    );
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await rm(dir, { recursive: true, force: true });
  }
}

/** The child: holds the streams, then sends back (book id, latest arrival over all streams). */
async function followAll(): Promise<void> {
  const arrivals: [number, number][] = [];
  await Promise.all(Array.from({ length: STREAMS }, () => follow(Number(flags.port), flags.token as string, arrivals)));
  process.send?.('ready');
  process.once('message', () => {
    const latest = new Map<number, number>();
    for (const [id, at] of arrivals) latest.set(id, Math.max(latest.get(id) ?? 0, at));
    process.send?.({ frames: arrivals.length, latest: [...latest] }, () => process.exit(0));
  });
}

(flags.follower ? followAll() : main()).catch((err: unknown) => {
  process.stderr.write(`bench:fanout: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
