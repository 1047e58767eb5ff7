/** One sample line of a Prometheus text exposition. */
export interface ParsedSample {
  /** The sample's own name (`x_bucket`, `x_sum`, … for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface ParsedFamily {
  type: string;
  samples: ParsedSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * The families of a 0.0.4 text by name, each with its `# TYPE` and the samples written under it
 * (a sample belongs to the family whose header came last, as the format writes them).
 * Label values are left escaped: the families read here never need escaping.
 */
export function parseExposition(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  let current: ParsedFamily | undefined;
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) {
      current = { type: type[2] as string, samples: [] };
      families.set(type[1] as string, current);
      continue;
    }
    const sample = SAMPLE.exec(line);
    if (sample === null || current === undefined) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (sample[2] ?? '').matchAll(LABEL)) labels[name as string] = value as string;
    current.samples.push({ name: sample[1] as string, labels, value: Number(sample[3]) });
  }
  return families;
}
