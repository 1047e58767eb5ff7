/**
 * The Prometheus text exposition format, version 0.0.4: the bytes every scraper reads. Only the
 * escaping and number rules live here; which families exist is the registry's business.
 */

/**
 * The Content-Type a 0.0.4 scrape answer carries. The format is UTF-8 by definition, but a client
 * reading `text/plain` without a charset may take it as US-ASCII (RFC 2046 section 4.1.2), so it
 * says so, as Prometheus's own client libraries do.
 */
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Metric names (`[a-zA-Z_:][a-zA-Z0-9_:]*`) and label names (no colon; `__` is reserved). */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function isMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

export function isLabelName(name: string): boolean {
  return LABEL_NAME.test(name) && !name.startsWith('__');
}

/** HELP text: backslash and line feed are escaped (a quote is not, unlike label values). */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\\' ? '\\\\' : '\\n'));
}

/** Label values: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\\' ? '\\\\' : c === '"' ? '\\"' : '\\n'));
}

/** Go's ParseFloat reads what JavaScript prints, except the three specials, spelled as Prometheus does. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** `{a="x",b="y"}`, or '' for no labels; `extra` is a pre-formatted pair such as `le="0.1"`. */
export function formatLabels(names: readonly string[], values: readonly string[], extra?: string): string {
  const pairs = names.map((name, i) => `${name}="${escapeLabelValue(values[i] as string)}"`);
  if (extra !== undefined) pairs.push(extra);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** The HELP and TYPE lines that open every family. */
export function familyHeader(name: string, help: string, type: string): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
}
