import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { fork } from 'node:child_process';
import type { LatencySummary } from './histogram.ts';

/**
 * A process's resident set size in MB, from /proc; 0 where /proc is missing. `RssAnon` is the part
 * that is the process's own memory, without the pages of files it maps (its executable among them).
 */
export function rssMb(pid: number | undefined, field: 'VmRSS' | 'RssAnon' = 'VmRSS'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Samples a process's RSS every 20 ms until stopped; `max` is the largest seen. */
export function rssSampler(pid: number | undefined): { readonly max: number; stop(): void } {
  let max = rssMb(pid);
  const timer = setInterval(() => {
    max = Math.max(max, rssMb(pid));
  }, 20);
  return {
    get max() {
      return max;
    },
    stop: () => clearInterval(timer),
  };
}

export interface Timed {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
  body: string | undefined;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** One request over a keep-alive connection, timed to the first body byte and to the end. */
export function timed(port: number, method: string, path: string, headers: Record<string, string>, body?: string, keepBody = false): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = request({ host: '127.0.0.1', port, method, path, agent, headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) } }, (res) => {
      let firstByteMs = Number.NaN;
      let bytes = 0;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - start;
        bytes += chunk.length;
        if (keepBody) chunks.push(chunk);
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, firstByteMs, totalMs: performance.now() - start, bytes, body: keepBody ? Buffer.concat(chunks).toString('utf8') : undefined }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * GET /healthz back to back until stopped, from its own process (bench/scale-pinger.ts): its
 * latency is what every other client waits for while the service is busy, so its maximum is the
 * longest event-loop stall seen from outside.
 */
export async function healthPinger(port: number): Promise<{ stop(): Promise<LatencySummary> }> {
  const child = fork(new URL('./scale-pinger.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`pinger exited with code ${code} before reporting`))));
  const next = (): Promise<unknown> => Promise.race([new Promise((resolve) => child.once('message', resolve)), exited]);
  const ready = next();
  child.send({ port });
  await ready;
  return {
    stop: () => {
      const summary = next() as Promise<LatencySummary>;
      child.send('stop');
      return summary;
    },
  };
}

/** Runs `body` back to back until `until`; resolves with how many times it completed. */
export async function repeat(until: number, body: () => Promise<unknown>): Promise<number> {
  let done = 0;
  while (performance.now() < until) {
    await body();
    done++;
  }
  return done;
}

/** A GET /books whose answer is never read: the socket is paused before the request is sent. */
export async function stalledList(port: number, token: string): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.pause();
  socket.on('error', () => {});
  socket.write(`GET /books HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\n\r\n`);
  return socket;
}

export function closeAgent(): void {
  agent.destroy();
}
