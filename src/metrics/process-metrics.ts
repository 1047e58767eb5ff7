import { readdirSync, readFileSync } from 'node:fs';
import { registerEventLoopLag } from './event-loop-lag.ts';
import { registerGcMetrics } from './gc-metrics.ts';
import { registerNodeMetrics } from './node-metrics.ts';
import type { Registry, Sample } from './registry.ts';

/** Linux's per-process files; elsewhere the families they feed have no sample (or a portable fallback). */
const PROC_STATUS = '/proc/self/status';
const PROC_LIMITS = '/proc/self/limits';
const PROC_FDS = '/proc/self/fd';

/** The `/proc/self/status` fields prom-client reads: resident set, virtual size, data segment. */
const STATUS_FIELDS = { VmRSS: /^VmRSS:\s*(\d+) kB$/m, VmSize: /^VmSize:\s*(\d+) kB$/m, VmData: /^VmData:\s*(\d+) kB$/m } as const;

/** A `/proc/self/status` field in bytes (the file says kB, meaning KiB), or undefined when absent. */
function statusBytes(status: string, field: keyof typeof STATUS_FIELDS): number | undefined {
  const m = STATUS_FIELDS[field].exec(status);
  return m === null ? undefined : Number(m[1]) * 1024;
}

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** The soft limit on open files, as `ulimit -n` says; undefined when unknown or unlimited. */
function maxFds(): number | undefined {
  const m = /^Max open files\s+(\d+)/m.exec(readOrEmpty(PROC_LIMITS));
  return m === null ? undefined : Number(m[1]);
}

/** Open file descriptors, where the platform lists them; none elsewhere. */
function openFds(): readonly Sample[] {
  try {
    // The directory handle readdirSync opens is itself one entry.
    return [{ labels: [], value: readdirSync(PROC_FDS).length - 1 }];
  } catch {
    return [];
  }
}

const present = (value: number | undefined): number | readonly Sample[] => (value === undefined ? [] : value);

/**
 * prom-client's `process_*` families, with its names, types and meanings, read at scrape time:
 * CPU, memory (resident, virtual and data segment from /proc/self/status, as prom-client reads
 * them on Linux), file descriptors and start time. One reading per scrape feeds the families that
 * share it, so user + system is exactly the total.
 */
function registerProcessFamilies(registry: Registry): void {
  let cpu = process.cpuUsage();
  let status = '';
  registry.onScrape(() => {
    cpu = process.cpuUsage();
    status = readOrEmpty(PROC_STATUS);
  });
  registry.collect({ name: 'process_cpu_user_seconds_total', help: 'Total user CPU time spent in seconds.', type: 'counter', read: () => cpu.user / 1e6 });
  registry.collect({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', type: 'counter', read: () => cpu.system / 1e6 });
  registry.collect({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', type: 'counter', read: () => (cpu.user + cpu.system) / 1e6 });
  const started = Math.round(performance.timeOrigin) / 1000;
  registry.collect({ name: 'process_start_time_seconds', help: 'Start time of the process since the Unix epoch, in seconds.', type: 'gauge', read: () => started });
  registry.collect({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    type: 'gauge',
    read: () => statusBytes(status, 'VmRSS') ?? process.memoryUsage.rss(),
  });
  registry.collect({ name: 'process_virtual_memory_bytes', help: 'Virtual memory size in bytes.', type: 'gauge', read: () => present(statusBytes(status, 'VmSize')) });
  registry.collect({ name: 'process_heap_bytes', help: 'Process heap size (the data segment) in bytes.', type: 'gauge', read: () => present(statusBytes(status, 'VmData')) });
  registry.collect({ name: 'process_open_fds', help: 'Number of open file descriptors.', type: 'gauge', read: openFds });
  // Read once, as prom-client does: Node.js raises the soft limit to the hard one at startup.
  const max = maxFds();
  registry.collect({ name: 'process_max_fds', help: 'Maximum number of open file descriptors.', type: 'gauge', read: () => present(max) });
}

/**
 * The process and Node.js runtime families, named and typed as prom-client's default metrics so
 * standard Node.js dashboards read them (docs/contract.md, "Metrics"), plus the build's own info.
 * Returns what stops the event-loop timer and the GC observer.
 */
export function registerProcessMetrics(registry: Registry, build: { version: string }): () => void {
  registerProcessFamilies(registry);
  const stopLag = registerEventLoopLag(registry);
  registerNodeMetrics(registry);
  const stopGc = registerGcMetrics(registry);
  const info = registry.gauge('book_catalogue_build_info', 'Always 1; the labels name the running version and Node.js.', ['version', 'node']);
  info.labels(build.version, process.version).set(1);
  return () => {
    stopLag();
    stopGc();
  };
}
