import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import { createMetrics, type CatalogueMetrics } from '../src/metrics/catalogue-metrics.ts';
import { median } from './median.ts';

/**
 * `node --import tsx bench/metrics-scrape.ts`: the time one scrape (`registry.expose()`, every
 * family read and written) takes, idle and with 1,000 connections open (the handle counts and the
 * open-fd listing grow with them), as the median of 500 scrapes after 100 to warm up.
 */
const SCRAPES = 500;
const CONNECTIONS = 1000;

function measure(metrics: CatalogueMetrics, label: string): void {
  const times: number[] = [];
  for (let i = 0; i < 100 + SCRAPES; i++) {
    const start = performance.now();
    metrics.registry.expose();
    if (i >= 100) times.push(performance.now() - start);
  }
  process.stdout.write(`scrape, ${label}: median ${(median(times) * 1000).toFixed(0)} µs, max ${(Math.max(...times) * 1000).toFixed(0)} µs\n`);
}

const metrics = createMetrics();
measure(metrics, 'idle');
const server = createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as { port: number };
const sockets = await Promise.all(
  Array.from({ length: CONNECTIONS }, () => new Promise<Socket>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  })),
);
measure(metrics, `${CONNECTIONS} connections open`);
for (const socket of sockets) socket.destroy();
server.closeAllConnections();
server.close();
metrics.close();
