import { getHeapSpaceStatistics, type HeapSpaceInfo } from 'node:v8';
import type { Registry, Sample } from './registry.ts';

/**
 * `process._getActiveHandles()` / `_getActiveRequests()`: what prom-client counts by type. Node.js
 * deprecates them in its documentation only (DEP0161) and still ships them; a runtime without
 * them leaves the families empty rather than failing.
 */
interface ActiveLists {
  _getActiveHandles?: () => unknown[];
  _getActiveRequests?: () => unknown[];
}

/** How many of each class (the handle's or request's constructor name, a bounded set) are active. */
function countByType(list: (() => unknown[]) | undefined): readonly Sample[] {
  if (list === undefined) return [];
  const counts = new Map<string, number>();
  for (const item of list.call(process)) {
    const type = typeof item === 'object' && item !== null ? (item.constructor?.name ?? 'Object') : typeof item;
    counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return [...counts].map(([type, value]) => ({ labels: [type], value }));
}

/** V8 names its spaces `new_space`, `old_space`, …: prom-client's `space` label drops the suffix. */
const spaceName = (space: HeapSpaceInfo): string => space.space_name.replace(/_space$/, '');

/**
 * prom-client's `nodejs_*` families (but the event loop's and the GC's, in their own files): heap,
 * heap spaces, external memory, active handles and requests, and the version. Left out:
 * `nodejs_active_handles_total` and `nodejs_active_requests_total`, gauges whose `_total` suffix
 * Prometheus reserves for counters (`promtool check metrics` refuses them);
 * `sum(nodejs_active_handles)` is the same figure.
 */
export function registerNodeMetrics(registry: Registry): void {
  let memory = process.memoryUsage();
  let spaces: readonly HeapSpaceInfo[] = [];
  registry.onScrape(() => {
    memory = process.memoryUsage();
    spaces = getHeapSpaceStatistics();
  });
  registry.collect({ name: 'nodejs_heap_size_total_bytes', help: 'V8 heap size (allocated) in bytes.', type: 'gauge', read: () => memory.heapTotal });
  registry.collect({ name: 'nodejs_heap_size_used_bytes', help: 'V8 heap in use in bytes.', type: 'gauge', read: () => memory.heapUsed });
  registry.collect({ name: 'nodejs_external_memory_bytes', help: 'Memory of C++ objects bound to JavaScript objects (Buffers included) in bytes.', type: 'gauge', read: () => memory.external });
  const bySpace = (pick: (space: HeapSpaceInfo) => number) => (): readonly Sample[] => spaces.map((s) => ({ labels: [spaceName(s)], value: pick(s) }));
  registry.collect({ name: 'nodejs_heap_space_size_total_bytes', help: 'Size of each V8 heap space in bytes.', type: 'gauge', labelNames: ['space'], read: bySpace((s) => s.space_size) });
  registry.collect({ name: 'nodejs_heap_space_size_used_bytes', help: 'Bytes in use in each V8 heap space.', type: 'gauge', labelNames: ['space'], read: bySpace((s) => s.space_used_size) });
  registry.collect({ name: 'nodejs_heap_space_size_available_bytes', help: 'Bytes still available in each V8 heap space.', type: 'gauge', labelNames: ['space'], read: bySpace((s) => s.space_available_size) });
  const lists = process as unknown as ActiveLists;
  registry.collect({
    name: 'nodejs_active_handles',
    help: 'Active handles (servers, sockets, timers, ...) keeping the event loop alive, by the class that holds them.',
    type: 'gauge',
    labelNames: ['type'],
    read: () => countByType(lists._getActiveHandles),
  });
  registry.collect({
    name: 'nodejs_active_requests',
    help: 'Active libuv requests (file system calls, DNS lookups, ...) in flight, by the class that holds them.',
    type: 'gauge',
    labelNames: ['type'],
    read: () => countByType(lists._getActiveRequests),
  });
  const [major, minor, patch] = process.versions.node.split('.');
  const version = registry.gauge('nodejs_version_info', 'Always 1; the labels name the running Node.js version.', ['version', 'major', 'minor', 'patch']);
  version.labels(process.version, major ?? '', minor ?? '', patch ?? '').set(1);
}
