/**
 * A log-linear latency histogram in microseconds (HdrHistogram's layout, three significant
 * digits): recording is an index computation and one increment, so the generator can record
 * every response without allocating.
 */
const SUB_BUCKET_BITS = 10;
const SUB_BUCKETS = 1 << SUB_BUCKET_BITS;
/** Values up to 2^31 µs (about 36 minutes) keep their precision; longer ones land in the top bucket. */
const MAX_SHIFT = 31 - SUB_BUCKET_BITS - 1;

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export class LatencyHistogram {
  readonly #counts = new Uint32Array(SUB_BUCKETS * (MAX_SHIFT + 2));
  #count = 0;
  #maxMicros = 0;

  get count(): number {
    return this.#count;
  }

  record(micros: number): void {
    const v = micros < 0 ? 0 : micros > 0x7fffffff ? 0x7fffffff : Math.round(micros);
    this.#counts[bucketOf(v)]!++;
    this.#count++;
    if (v > this.#maxMicros) this.#maxMicros = v;
  }

  reset(): void {
    this.#counts.fill(0);
    this.#count = 0;
    this.#maxMicros = 0;
  }

  /** The smallest recorded value (bucket upper bound, µs) at or below which `fraction` of values fall. */
  quantileMicros(fraction: number): number {
    if (this.#count === 0) return 0;
    const rank = Math.max(1, Math.ceil(fraction * this.#count));
    let seen = 0;
    for (let i = 0; i < this.#counts.length; i++) {
      seen += this.#counts[i]!;
      if (seen >= rank) return Math.min(upperBoundOf(i), this.#maxMicros);
    }
    return this.#maxMicros;
  }

  summary(): LatencySummary {
    return {
      count: this.#count,
      p50Ms: this.quantileMicros(0.5) / 1000,
      p99Ms: this.quantileMicros(0.99) / 1000,
      maxMs: this.#maxMicros / 1000,
    };
  }
}

/** Below 1024 µs one bucket per µs; above, 1024 buckets per power of two. */
function bucketOf(v: number): number {
  if (v < SUB_BUCKETS) return v;
  const shift = 31 - Math.clz32(v) - SUB_BUCKET_BITS;
  return SUB_BUCKETS * (shift + 1) + ((v >>> shift) - SUB_BUCKETS);
}

function upperBoundOf(index: number): number {
  if (index < SUB_BUCKETS) return index;
  const shift = Math.floor(index / SUB_BUCKETS) - 1;
  const mantissa = (index % SUB_BUCKETS) + SUB_BUCKETS;
  return (mantissa + 1) * 2 ** shift - 1;
}
