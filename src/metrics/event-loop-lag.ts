import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { Registry } from './registry.ts';

/**
 * The sampling interval. prom-client ticks every 10 ms; every tick wakes an idle process, and 20
 * halves that cost while any stall longer than a tick still delays one.
 */
const RESOLUTION_MS = 20;
const RESOLUTION_NS = RESOLUTION_MS * 1e6;

/** A delay in seconds from a recorded interval in nanoseconds: the interval itself is not delay. */
const delay = (ns: number): number => Math.max(0, ns - RESOLUTION_NS) / 1e9;

/** prom-client's windowed families (`nodejs_eventloop_lag_<figure>_seconds`), each read from the window. */
const WINDOW_FIGURES: readonly { figure: string; help: string; read: (window: RecordableHistogram) => number }[] = [
  { figure: 'min', help: 'The minimum recorded event loop delay', read: (w) => delay(w.min) },
  { figure: 'max', help: 'The maximum recorded event loop delay', read: (w) => delay(w.max) },
  { figure: 'mean', help: 'The mean of the recorded event loop delays', read: (w) => delay(w.mean) },
  { figure: 'stddev', help: 'The standard deviation of the recorded event loop delays', read: (w) => w.stddev / 1e9 },
  { figure: 'p50', help: 'The 50th percentile of the recorded event loop delays', read: (w) => delay(w.percentile(50)) },
  { figure: 'p90', help: 'The 90th percentile of the recorded event loop delays', read: (w) => delay(w.percentile(90)) },
  { figure: 'p99', help: 'The 99th percentile of the recorded event loop delays', read: (w) => delay(w.percentile(99)) },
];

/**
 * prom-client's event-loop families: `nodejs_eventloop_lag_seconds` (the latest sample) and
 * `nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds` over the window since the
 * previous scrape, so a stall shows in the scrape that follows it and then leaves the figures.
 * A delay is how late a 20 ms timer fires: the interval itself is not delay (prom-client's figures
 * include its own 10 ms interval, so an idle process reads about 0.010 there and 0 here).
 *
 * The timer is our own rather than `monitorEventLoopDelay`'s: that monitor's `reset()` also forgets
 * when it last ticked, so a stall that starts before its next tick after a reset (a slow request
 * handled right after a scrape) is dropped: its first interval is never recorded. Returns what
 * stops the timer.
 */
export function registerEventLoopLag(registry: Registry): () => void {
  const window = createHistogram();
  let last = Number.NaN;
  let previous = process.hrtime.bigint();
  const timer = setInterval(() => {
    const now = process.hrtime.bigint();
    const interval = now - previous;
    previous = now;
    window.record(interval);
    last = delay(Number(interval));
  }, RESOLUTION_MS);
  timer.unref();

  // The window closes at each scrape; intervals are recorded whole (the histogram keeps only
  // positive integers) and shifted when read.
  let closed: readonly number[] | undefined;
  registry.onScrape(() => {
    closed = window.count === 0 ? undefined : WINDOW_FIGURES.map((f) => f.read(window));
    window.reset();
  });

  registry.collect({ name: 'nodejs_eventloop_lag_seconds', help: `Lag of event loop in seconds: how late the latest ${RESOLUTION_MS} ms sampling tick fired.`, type: 'gauge', read: () => (Number.isNaN(last) ? [] : last) });
  WINDOW_FIGURES.forEach(({ figure, help }, i) => {
    registry.collect({
      name: `nodejs_eventloop_lag_${figure}_seconds`,
      help: `${help}, in seconds, since the previous scrape.`,
      type: 'gauge',
      // No tick since the previous scrape (two scrapes within one interval): no figure rather than a made-up one.
      read: () => (closed === undefined ? [] : (closed[i] as number)),
    });
  });
  return () => clearInterval(timer);
}
