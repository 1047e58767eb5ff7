import { LatencyHistogram } from './histogram.ts';
import { timed } from './scale-probes.ts';

/**
 * GET /healthz back to back in a process of its own (forked by healthPinger), so what it measures
 * is the service's delay, not that of the bench process reading four lists. Starts on a
 * `{port}` message (answering `ready`), stops on `stop` and answers with the LatencySummary.
 */
process.on('message', (message: { port: number } | 'stop') => {
  if (message === 'stop') {
    running = false;
    return;
  }
  void ping(message.port);
});

let running = true;

async function ping(port: number): Promise<void> {
  const histogram = new LatencyHistogram();
  // The first answer warms the connection and says the pinger is running; it is not counted.
  await timed(port, 'GET', '/healthz', {});
  process.send?.('ready');
  while (running) {
    histogram.record((await timed(port, 'GET', '/healthz', {})).totalMs * 1000);
    await new Promise((r) => setTimeout(r, 2));
  }
  process.send?.(histogram.summary(), () => process.disconnect());
}
