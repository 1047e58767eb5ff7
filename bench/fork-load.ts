import { fork } from 'node:child_process';
import type { LoadJob } from './load-process.ts';
import type { LoadOptions, LoadResult } from './load.ts';

/** Runs the generator in a process of its own (bench/load-process.ts), so it never shares a thread with a server. */
export function runLoadInChild(options: LoadOptions): Promise<LoadResult> {
  const child = fork(new URL('./load-process.ts', import.meta.url), { execArgv: ['--import', 'tsx'] });
  const job: LoadJob = { ...options, requests: options.requests.map((r) => Buffer.from(r).toString('latin1')) };
  return new Promise((resolve, reject) => {
    child.once('message', (result) => resolve(result as LoadResult));
    child.once('exit', (code) => reject(new Error(`load generator exited with code ${code} before reporting`)));
    child.send(job);
  });
}
