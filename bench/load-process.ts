import { runLoad, type LoadOptions } from './load.ts';

/**
 * The generator's own process (forked by run.ts), so it never competes with a server for the
 * same JavaScript thread. Receives options with the requests as latin1 text over IPC, answers
 * with the LoadResult, and exits.
 */
export interface LoadJob extends Omit<LoadOptions, 'requests'> {
  requests: string[];
}

process.once('message', (job: LoadJob) => {
  const requests = job.requests.map((text) => Buffer.from(text, 'latin1'));
  runLoad({ ...job, requests }).then(
    (result) => process.send?.(result, () => process.disconnect()),
    (err: unknown) => {
      process.stderr.write(`load generator failed: ${(err as Error).message}\n`);
      process.exitCode = 1;
      process.disconnect();
    },
  );
});
