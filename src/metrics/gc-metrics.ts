import { constants, PerformanceObserver, type NodeGCPerformanceDetail, type PerformanceEntry } from 'node:perf_hooks';
import type { HistogramChild } from './children.ts';
import type { Registry } from './registry.ts';

/** prom-client's buckets, in seconds: a minor collection takes well under 1 ms, a major one more. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

/**
 * `nodejs_gc_duration_seconds{kind}`, as prom-client has it: every collection V8 reports, by kind
 * (`major`, `minor`, `incremental`, `weakcb`; the four exist from the start, so rate() sees them).
 * The observer runs once per batch of collections, never per request. Returns what disconnects it.
 */
export function registerGcMetrics(registry: Registry): () => void {
  const histogram = registry.histogram('nodejs_gc_duration_seconds', 'Garbage collection duration by kind (major, minor, incremental or weakcb), in seconds.', GC_BUCKETS, ['kind']);
  const byKind = new Map<number, HistogramChild>([
    [constants.NODE_PERFORMANCE_GC_MAJOR, histogram.labels('major')],
    [constants.NODE_PERFORMANCE_GC_MINOR, histogram.labels('minor')],
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL, histogram.labels('incremental')],
    [constants.NODE_PERFORMANCE_GC_WEAKCB, histogram.labels('weakcb')],
  ]);
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as (PerformanceEntry & { detail?: NodeGCPerformanceDetail })[]) {
      // Another kind (V8's minor mark-compact, behind a flag) would be a label prom-client never has.
      const kind = entry.detail === undefined ? undefined : byKind.get(entry.detail.kind);
      kind?.observe(entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
