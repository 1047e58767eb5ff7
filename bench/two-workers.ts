/**
 * Two service processes behind one port, as bench:postgres runs them: Node's cluster module hands
 * each connection to a worker in turn (round-robin), the simplest load balancer there is. Every
 * worker runs dist/main.js with this process's arguments and environment.
 */
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';

const WORKERS = 2;
cluster.setupPrimary({ exec: fileURLToPath(new URL('../dist/main.js', import.meta.url)), args: process.argv.slice(2) });
for (let i = 0; i < WORKERS; i++) cluster.fork();
let running = WORKERS;
cluster.on('exit', () => {
  if (--running === 0) process.exit();
});
// A worker's IPC channel keeps it alive after it drains, so SIGTERM would leave it running: the
// bench is done with the workers when it stops this process, and every write it made was answered.
process.on('SIGTERM', () => {
  for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
});
