import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SHUTDOWN_GRACE_MS } from '../../src/transport/http-server.ts';
import { WAIT_MS, within } from './wait.ts';

/** The built CLI (`npm test` builds it in pretest). */
export const MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * How long a run to its end or a start may take before the test fails saying so (and the process
 * is killed): a command or a start that reads a data directory, on a loaded 2-core machine.
 */
const RUN_MS = 60_000;

export interface RunOptions {
  args?: readonly string[];
  /** The whole environment besides PATH: tests start from a clean one. */
  env?: Readonly<Record<string, string>>;
  cwd: string;
  /** A single executable to run instead of `node dist/main.js`, with `env` alone: no PATH, so no node on it. */
  binary?: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Children still running: a failed assertion must not leave one holding the test file open. */
const running = new Set<ChildProcess>();

function spawnMain(options: RunOptions): ChildProcess {
  const args = options.args ?? [];
  const child =
    options.binary === undefined
      ? spawn(process.execPath, [MAIN, ...args], { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(options.binary, args, { cwd: options.cwd, env: { ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.on('close', () => running.delete(child));
  return child;
}

/** For `after`: kills whatever a failed test left running and waits until it is gone. */
export async function killAll(): Promise<void> {
  await Promise.all(
    [...running].map(
      (child) =>
        new Promise<void>((resolve) => {
          child.on('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** The command line, for a failure message. */
function described(options: RunOptions): string {
  return [options.binary ?? 'node dist/main.js', ...(options.args ?? [])].join(' ');
}

/** `exited`, or, past `ms`, the child killed and a failure naming `what` with the output so far. */
async function boundedExit(child: ChildProcess, exited: Promise<Exit>, out: { stdout: string; stderr: string }, what: string, ms: number): Promise<Exit> {
  try {
    return await within(what, exited, ms);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}; output so far: ${JSON.stringify(out)}`);
  }
}

function collect(child: ChildProcess): { out: { stdout: string; stderr: string }; exited: Promise<Exit> } {
  const out = { stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (s: string) => (out.stdout += s));
  child.stderr?.setEncoding('utf8').on('data', (s: string) => (out.stderr += s));
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, ...out }));
  });
  return { out, exited };
}

/** Runs the CLI to its end (for --help, --version and startup errors). */
export function runMain(options: RunOptions): Promise<Exit> {
  const child = spawnMain(options);
  const { out, exited } = collect(child);
  return boundedExit(child, exited, out, `${described(options)} ending`, RUN_MS);
}

/** Starts the CLI without waiting for anything (for runs that print no startup line). */
export function launchMain(options: RunOptions): { child: ChildProcess; output(): { stdout: string; stderr: string }; exited: Promise<Exit> } {
  const child = spawnMain(options);
  const { out, exited } = collect(child);
  return { child, output: () => ({ ...out }), exited };
}

export interface RunningService {
  readonly child: ChildProcess;
  readonly port: number;
  readonly url: string;
  /** The startup line, parsed. */
  readonly startup: { msg: string; port: number; dataDir: string };
  /** Everything written so far. */
  output(): { stdout: string; stderr: string };
  readonly exited: Promise<Exit>;
  /** Sends the signal and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * Starts the CLI and resolves once its startup line ("listening on …, data in …") is out, so the
 * port is known. Pass `--port 0 --host 127.0.0.1` in `args` to get a free port.
 */
export function startMain(options: RunOptions): Promise<RunningService> {
  const child = spawnMain(options);
  const { out, exited } = collect(child);
  return new Promise((resolve, reject) => {
    const late = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${described(options)}: no "listening on" line within ${RUN_MS / 1000} s; output so far: ${JSON.stringify(out)}`));
    }, RUN_MS);
    const onData = (): void => {
      // Only complete lines: the last element is still being written.
      for (const line of out.stdout.split('\n').slice(0, -1)) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg: string; port?: number; dataDir?: string };
        if (!entry.msg.startsWith('listening on') || entry.port === undefined) continue;
        clearTimeout(late);
        child.stdout?.off('data', onData);
        const startup = { msg: entry.msg, port: entry.port, dataDir: entry.dataDir ?? '' };
        resolve({
          child,
          port: startup.port,
          url: `http://127.0.0.1:${startup.port}`,
          startup,
          output: () => ({ ...out }),
          exited,
          stop(signal = 'SIGTERM') {
            child.kill(signal);
            // The drain may take its whole limit before the process exits.
            return boundedExit(child, exited, out, `${described(options)} exiting on ${signal}`, SHUTDOWN_GRACE_MS + WAIT_MS);
          },
        });
        return;
      }
    };
    child.stdout?.on('data', onData);
    exited.then((exit) => {
      clearTimeout(late);
      reject(new Error(`exited before listening (code ${exit.code}): ${exit.stderr}${exit.stdout}`));
    });
  });
}

/**
 * Resolves once the service's `stream` matches `pattern`. stdout and stderr are separate pipes,
 * so a line the process wrote to stderr before its startup line may still be on its way.
 */
export function outputMatching(service: RunningService, stream: 'stdout' | 'stderr', pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const late = setTimeout(() => {
      service.child[stream]?.off('data', onData);
      reject(new Error(`no ${stream} matching ${pattern} within ${WAIT_MS / 1000} s: ${JSON.stringify(service.output())}`));
    }, WAIT_MS);
    const check = (): boolean => {
      const text = service.output()[stream];
      if (!pattern.test(text)) return false;
      clearTimeout(late);
      service.child[stream]?.off('data', onData);
      resolve(text);
      return true;
    };
    const onData = (): void => void setImmediate(check);
    if (check()) return;
    service.child[stream]?.on('data', onData);
    void service.exited.then(() => {
      if (!check()) {
        clearTimeout(late);
        reject(new Error(`exited without ${stream} matching ${pattern}: ${JSON.stringify(service.output())}`));
      }
    });
  });
}

/** The metrics listener's port, from the line a service started with `--metrics-port 0` logs. */
export function metricsPortOf(service: RunningService): number {
  const line = service
    .output()
    .stdout.split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { metricsPort?: number })
    .find((l) => l.metricsPort !== undefined);
  if (line?.metricsPort === undefined) throw new Error(`no metrics listener in the service's output: ${service.output().stdout}`);
  return line.metricsPort;
}
