/** The values a family's label children hold; the hot path updates these and nothing else. */

/** A value that only goes up (Prometheus counter); rate() reads it. */
export class CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** A value that goes up and down. */
export class GaugeChild {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
  inc(by = 1): void {
    this.value += by;
  }
  dec(by = 1): void {
    this.value -= by;
  }
}

/** Observations counted in buckets; kept per bucket here, made cumulative when written. */
export class HistogramChild {
  readonly #bounds: readonly number[];
  /** One slot per bound plus the last for `+Inf`. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(bounds: readonly number[]) {
    this.#bounds = bounds;
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(value: number): void {
    const bounds = this.#bounds;
    let i = 0;
    // `le` is "less than or equal": a value on a bound belongs to that bound's bucket.
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count++;
  }
}
