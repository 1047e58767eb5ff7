import { CounterChild, GaugeChild, HistogramChild } from './children.ts';
import { familyHeader, formatLabels, formatValue, isLabelName, isMetricName } from './exposition.ts';

export { CounterChild, GaugeChild, HistogramChild };

/** What a family says in its `# TYPE` line. */
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One labelled value read at scrape time (label values in the family's label-name order). */
export interface Sample {
  readonly labels: readonly string[];
  readonly value: number;
}

/** A family that writes its own lines (HELP and TYPE included): for types the registry does not build. */
export interface Family {
  readonly name: string;
  write(): string;
}

function checkLabelNames(name: string, labelNames: readonly string[], reserved: readonly string[] = []): void {
  if (!isMetricName(name)) throw new TypeError(`invalid metric name ${JSON.stringify(name)}`);
  for (const label of labelNames) {
    if (!isLabelName(label) || reserved.includes(label)) throw new TypeError(`invalid label name ${JSON.stringify(label)} on ${name}`);
  }
  if (new Set(labelNames).size !== labelNames.length) throw new TypeError(`duplicate label name on ${name}`);
}

/**
 * A family with label children. Resolve a child once (`labels(...)`) and keep it: the hot path
 * then does no lookup at all. An unlabelled family is written as 0 before anything happened
 * (rate() needs the zero).
 */
abstract class LabelledFamily<C> implements Family {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly #children = new Map<string, { values: readonly string[]; child: C }>();

  constructor(name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
  }

  protected abstract create(): C;
  protected abstract writeChild(values: readonly string[], child: C): string;
  protected abstract get type(): MetricType;

  /** The child for these label values (one per label name, in order), created on first use. */
  labels(...values: string[]): C {
    if (values.length !== this.labelNames.length) throw new TypeError(`${this.name} takes ${this.labelNames.length} label values`);
    const key = values.join('\u0000');
    let entry = this.#children.get(key);
    if (entry === undefined) {
      entry = { values, child: this.create() };
      this.#children.set(key, entry);
    }
    return entry.child;
  }

  /** How many label combinations exist: what a cardinality check reads. */
  get size(): number {
    return this.#children.size;
  }

  write(): string {
    if (this.labelNames.length === 0) this.labels();
    let text = familyHeader(this.name, this.help, this.type);
    for (const { values, child } of this.#children.values()) text += this.writeChild(values, child);
    return text;
  }
}

/** A family whose children each hold one value: one sample line per child. */
abstract class ValueFamily<C extends { value: number }> extends LabelledFamily<C> {
  protected writeChild(values: readonly string[], child: C): string {
    return `${this.name}${formatLabels(this.labelNames, values)} ${formatValue(child.value)}\n`;
  }
}

export class Counter extends ValueFamily<CounterChild> {
  protected get type(): MetricType {
    return 'counter';
  }
  protected create(): CounterChild {
    return new CounterChild();
  }
  /** The unlabelled child's `inc`. */
  inc(by = 1): void {
    this.labels().inc(by);
  }
}

export class Gauge extends ValueFamily<GaugeChild> {
  protected get type(): MetricType {
    return 'gauge';
  }
  protected create(): GaugeChild {
    return new GaugeChild();
  }
  /** The unlabelled child's `set`. */
  set(value: number): void {
    this.labels().set(value);
  }
}

export class Histogram extends LabelledFamily<HistogramChild> {
  readonly buckets: readonly number[];

  constructor(name: string, help: string, buckets: readonly number[], labelNames: readonly string[]) {
    const sorted = buckets.every((b, i) => i === 0 || b > (buckets[i - 1] as number));
    if (buckets.length === 0 || !sorted || !buckets.every(Number.isFinite)) throw new TypeError(`${name}: buckets must be finite and strictly increasing`);
    super(name, help, labelNames);
    this.buckets = buckets;
  }

  protected get type(): MetricType {
    return 'histogram';
  }
  protected create(): HistogramChild {
    return new HistogramChild(this.buckets);
  }
  protected writeChild(values: readonly string[], child: HistogramChild): string {
    let text = '';
    let cumulative = 0;
    for (let i = 0; i <= this.buckets.length; i++) {
      cumulative += child.counts[i] as number;
      const le = i === this.buckets.length ? '+Inf' : formatValue(this.buckets[i] as number);
      text += `${this.name}_bucket${formatLabels(this.labelNames, values, `le="${le}"`)} ${cumulative}\n`;
    }
    const labels = formatLabels(this.labelNames, values);
    return `${text}${this.name}_sum${labels} ${formatValue(child.sum)}\n${this.name}_count${labels} ${child.count}\n`;
  }
  /** The unlabelled child's `observe`. */
  observe(value: number): void {
    this.labels().observe(value);
  }
}

/** A family whose values are read when scraped (sizes, process figures): nothing to update. */
class CollectedFamily implements Family {
  readonly name: string;
  readonly #help: string;
  readonly #type: MetricType;
  readonly #labelNames: readonly string[];
  readonly #read: () => number | readonly Sample[];

  constructor(name: string, help: string, type: 'counter' | 'gauge', labelNames: readonly string[], read: () => number | readonly Sample[]) {
    this.name = name;
    this.#help = help;
    this.#type = type;
    this.#labelNames = labelNames;
    this.#read = read;
  }

  write(): string {
    const read = this.#read();
    const samples: readonly Sample[] = typeof read === 'number' ? [{ labels: [], value: read }] : read;
    let text = familyHeader(this.name, this.#help, this.#type);
    for (const s of samples) text += `${this.name}${formatLabels(this.#labelNames, s.labels)} ${formatValue(s.value)}\n`;
    return text;
  }
}

/** What `Registry.collect` needs: the family's name, meaning, type and how to read it. */
export interface CollectedOptions {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  labelNames?: readonly string[];
  /** Called at every scrape: a number (unlabelled) or one sample per label combination. */
  read: () => number | readonly Sample[];
}

/**
 * The metric families of one process, written in the order they were registered. A name can be
 * registered once; everything else (label escaping, cumulative buckets, `+Inf`) is handled here.
 */
export class Registry {
  readonly #families = new Map<string, Family>();
  readonly #scrapeHooks: (() => void)[] = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    checkLabelNames(name, labelNames);
    return this.#add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    checkLabelNames(name, labelNames);
    return this.#add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, buckets: readonly number[], labelNames: readonly string[] = []): Histogram {
    checkLabelNames(name, labelNames, ['le']);
    return this.#add(new Histogram(name, help, buckets, labelNames));
  }

  collect(options: CollectedOptions): void {
    const labelNames = options.labelNames ?? [];
    checkLabelNames(options.name, labelNames);
    this.#add(new CollectedFamily(options.name, options.help, options.type, labelNames, options.read));
  }

  /** A family that writes itself, such as a summary read from elsewhere. */
  register(family: Family): void {
    if (!isMetricName(family.name)) throw new TypeError(`invalid metric name ${JSON.stringify(family.name)}`);
    this.#add(family);
  }

  /**
   * Runs `hook` at the start of every `expose()`, before any family is read: for one reading that
   * several families share (one `process.memoryUsage()` for three heap figures, so they agree), or
   * a window of figures that each scrape closes.
   */
  onScrape(hook: () => void): void {
    this.#scrapeHooks.push(hook);
  }

  /** Every family in the text exposition format 0.0.4 (serve with EXPOSITION_CONTENT_TYPE). */
  expose(): string {
    for (const hook of this.#scrapeHooks) hook();
    let text = '';
    for (const family of this.#families.values()) text += family.write();
    return text;
  }

  #add<F extends Family>(family: F): F {
    if (this.#families.has(family.name)) throw new TypeError(`metric ${family.name} is already registered`);
    this.#families.set(family.name, family);
    return family;
  }
}
