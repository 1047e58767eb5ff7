import { execFile, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The figures of one wrk run, in the shape the report prints. */
export interface WrkResult {
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** wrk counts answers outside 2xx/3xx as one number. */
  readonly non2xx: number;
  readonly socketErrors: number;
}

export interface WrkOptions {
  url: string;
  connections: number;
  threads: number;
  durationMs: number;
  requests: readonly Buffer[];
  /** Where the generated Lua script is written. */
  workDir: string;
}

export function wrkAvailable(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** Lua string literal with every byte outside printable ASCII (and `"`, `\`) as a decimal escape. */
function luaString(bytes: Buffer): string {
  let out = '"';
  for (const b of bytes) out += b >= 32 && b < 127 && b !== 34 && b !== 92 ? String.fromCharCode(b) : `\\${b}`;
  return `${out}"`;
}

/** A script that sends the pre-built requests in turn, like the built-in generator. */
function script(requests: readonly Buffer[]): string {
  return `local reqs = {${requests.map(luaString).join(',\n')}}
local i = 0
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
`;
}

function millis(value: string, unit: string): number {
  const n = Number(value);
  return unit === 'us' ? n / 1000 : unit === 's' ? n * 1000 : unit === 'm' ? n * 60000 : n;
}

export function parseWrkOutput(text: string): WrkResult {
  const latency = (pct: string): number => {
    const m = new RegExp(`^\\s*${pct}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(text);
    return m === null ? NaN : millis(m[1] as string, m[2] as string);
  };
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    requests: Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN),
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN),
    p50Ms: latency('50'),
    p99Ms: latency('99'),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
    socketErrors: socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0),
  };
}

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const path = join(options.workDir, 'requests.lua');
  await writeFile(path, script(options.requests));
  const args = ['-t', String(options.threads), '-c', String(options.connections), '-d', `${options.durationMs / 1000}s`, '--latency', '-s', path, options.url];
  const output = await new Promise<string>((resolve, reject) => {
    execFile('wrk', args, { maxBuffer: 1 << 20 }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
  return parseWrkOutput(output);
}
