import type { RequestRecorder } from '../http/reply-writer.ts';
import type { Counter, CounterChild, Histogram, HistogramChild } from './registry.ts';

/** Methods the router knows keep their name; anything else Node's parser lets through is `other`. */
const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface MethodSlot {
  readonly duration: HistogramChild;
  readonly byStatus: Map<number, CounterChild>;
  readonly labels: readonly [string, string];
}

/**
 * Records one answer: `http_requests_total{method,route,status}` and
 * `http_request_duration_seconds{method,route}`. Label children are resolved once per (route,
 * method) and per status, then reused, so a request costs three Map lookups and no string building.
 * Every label value comes from a fixed set (the router's patterns, METHODS, the statuses the
 * service sends), whatever the client sends.
 */
export class RequestMetrics implements RequestRecorder {
  readonly #total: Counter;
  readonly #duration: Histogram;
  readonly #routes = new Map<string, Map<string, MethodSlot>>();

  constructor(total: Counter, duration: Histogram) {
    this.#total = total;
    this.#duration = duration;
  }

  /** `route` is a route pattern or `unmatched` (never a raw path); `method` is the request's, mapped to METHODS. */
  record(method: string, route: string, status: number, seconds: number): void {
    let methods = this.#routes.get(route);
    if (methods === undefined) {
      methods = new Map();
      this.#routes.set(route, methods);
    }
    const slot = methods.get(method) ?? this.#slot(methods, route, METHODS.has(method) ? method : 'other');
    let counter = slot.byStatus.get(status);
    if (counter === undefined) {
      counter = this.#total.labels(slot.labels[0], slot.labels[1], String(status));
      slot.byStatus.set(status, counter);
    }
    counter.inc();
    slot.duration.observe(seconds);
  }

  /** Keyed by the label value, never by an unknown method's own text: the map stays bounded too. */
  #slot(methods: Map<string, MethodSlot>, route: string, method: string): MethodSlot {
    let slot = methods.get(method);
    if (slot === undefined) {
      slot = { duration: this.#duration.labels(method, route), byStatus: new Map(), labels: [method, route] };
      methods.set(method, slot);
    }
    return slot;
  }
}
