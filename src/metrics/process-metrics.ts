import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { familyHeader, formatValue } from './exposition.ts';
import type { Registry } from './registry.ts';

/** The delay monitor samples on a timer: 20 ms keeps its own cost out of the figures it reports. */
const EVENT_LOOP_RESOLUTION_MS = 20;
const DELAY_QUANTILES = [0.5, 0.9, 0.99] as const;

/** Open file descriptors, where the platform lists them (Linux's /proc); none elsewhere. */
function openFds(): { labels: string[]; value: number }[] {
  try {
    // The directory handle readdirSync opens is itself one entry.
    return [{ labels: [], value: readdirSync('/proc/self/fd').length - 1 }];
  } catch {
    return [];
  }
}

/**
 * prom-client's standard process and Node.js families, read at scrape time, plus the event loop's
 * delay as a summary (quantiles over the process's life). Returns what stops the delay monitor.
 */
export function registerProcessMetrics(registry: Registry, build: { version: string }): () => void {
  registry.collect({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
    type: 'counter',
    read: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    },
  });
  registry.collect({ name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', type: 'gauge', read: () => process.memoryUsage.rss() });
  registry.collect({ name: 'process_open_fds', help: 'Number of open file descriptors.', type: 'gauge', read: openFds });
  const started = Math.round(performance.timeOrigin) / 1000;
  registry.collect({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', type: 'gauge', read: () => started });
  registry.collect({ name: 'nodejs_heap_used_bytes', help: 'V8 heap in use, in bytes.', type: 'gauge', read: () => process.memoryUsage().heapUsed });
  const delay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  delay.enable();
  registry.register({
    name: 'nodejs_eventloop_delay_seconds',
    write: () => {
      const name = 'nodejs_eventloop_delay_seconds';
      let text = familyHeader(name, 'Event loop delay beyond the monitor resolution since the process started, in seconds.', 'summary');
      const count = delay.count;
      // Each sample is the time between two ticks of the monitor's timer: the resolution is not delay.
      const beyond = (ns: number): number => Math.max(0, ns / 1e9 - EVENT_LOOP_RESOLUTION_MS / 1000);
      for (const q of DELAY_QUANTILES) {
        text += `${name}{quantile="${q}"} ${formatValue(count === 0 ? Number.NaN : beyond(delay.percentile(q * 100)))}\n`;
      }
      const sum = count === 0 ? 0 : beyond(delay.mean) * count;
      return `${text}${name}_sum ${formatValue(sum)}\n${name}_count ${count}\n`;
    },
  });
  const info = registry.gauge('book_catalogue_build_info', 'Always 1; the labels name the running version and Node.js.', ['version', 'node']);
  info.labels(build.version, process.version).set(1);
  return () => delay.disable();
}
