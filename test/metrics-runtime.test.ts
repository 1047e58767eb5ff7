import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createMetrics, createMetricsServer, listen, type CatalogueMetrics } from '../src/index.ts';
import { parseExposition, type ParsedFamily } from './helpers/exposition.ts';
import { promtoolCheck } from './helpers/promtool.ts';
import { needs } from './helpers/system-tools.ts';

const ON_LINUX = process.platform === 'linux';

/**
 * prom-client's default metrics (lib/metrics/*.js in siimon/prom-client) that standard Node.js
 * dashboards query: name, type, label names. `linux`: read from /proc, so without a sample elsewhere.
 */
const PROM_CLIENT_DEFAULTS: readonly { name: string; type: string; labels: readonly string[]; linux?: true }[] = [
  { name: 'process_cpu_user_seconds_total', type: 'counter', labels: [] },
  { name: 'process_cpu_system_seconds_total', type: 'counter', labels: [] },
  { name: 'process_cpu_seconds_total', type: 'counter', labels: [] },
  { name: 'process_start_time_seconds', type: 'gauge', labels: [] },
  { name: 'process_resident_memory_bytes', type: 'gauge', labels: [] },
  { name: 'process_virtual_memory_bytes', type: 'gauge', labels: [], linux: true },
  { name: 'process_heap_bytes', type: 'gauge', labels: [], linux: true },
  { name: 'process_open_fds', type: 'gauge', labels: [], linux: true },
  { name: 'process_max_fds', type: 'gauge', labels: [], linux: true },
  { name: 'nodejs_eventloop_lag_seconds', type: 'gauge', labels: [] },
  ...['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'].map((figure) => ({ name: `nodejs_eventloop_lag_${figure}_seconds`, type: 'gauge', labels: [] })),
  { name: 'nodejs_heap_size_total_bytes', type: 'gauge', labels: [] },
  { name: 'nodejs_heap_size_used_bytes', type: 'gauge', labels: [] },
  { name: 'nodejs_external_memory_bytes', type: 'gauge', labels: [] },
  { name: 'nodejs_heap_space_size_total_bytes', type: 'gauge', labels: ['space'] },
  { name: 'nodejs_heap_space_size_used_bytes', type: 'gauge', labels: ['space'] },
  { name: 'nodejs_heap_space_size_available_bytes', type: 'gauge', labels: ['space'] },
  { name: 'nodejs_active_handles', type: 'gauge', labels: ['type'] },
  { name: 'nodejs_version_info', type: 'gauge', labels: ['version', 'major', 'minor', 'patch'] },
  { name: 'nodejs_gc_duration_seconds', type: 'histogram', labels: ['kind'] },
];

interface Scraped {
  contentType: string | null;
  text: string;
  families: Map<string, ParsedFamily>;
}

interface Listening {
  metrics: CatalogueMetrics;
  scrape(): Promise<Scraped>;
  close(): void;
}

/** Runtime metrics alone (no app), served by the metrics listener on an ephemeral port. */
async function startListener(): Promise<Listening> {
  const metrics = createMetrics();
  const listener: Server = createMetricsServer(metrics.registry);
  const { port } = await listen(listener, 0, '127.0.0.1');
  return {
    metrics,
    async scrape() {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      const text = await res.text();
      return { contentType: res.headers.get('content-type'), text, families: parseExposition(text) };
    },
    close() {
      listener.close();
      listener.closeAllConnections();
      metrics.close();
    },
  };
}

/** The one sample of an unlabelled family, or undefined when it has none. */
function only(families: Map<string, ParsedFamily>, name: string): number | undefined {
  return families.get(name)?.samples[0]?.value;
}

/** Holds the event loop for `ms`: a synchronous stall, as a slow handler would cause. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/**
 * Scrapes until the event-loop window has a figure (a scrape that comes before the sampling timer
 * ticked again has none, and closes nothing): a bounded wait that fails naming what never came.
 */
async function windowScrape(scrape: () => Promise<Map<string, ParsedFamily>>): Promise<Map<string, ParsedFamily>> {
  for (let i = 0; i < 400; i++) {
    const families = await scrape();
    if (only(families, 'nodejs_eventloop_lag_max_seconds') !== undefined) return families;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.fail('nodejs_eventloop_lag_max_seconds never had a sample: the sampling timer did not tick in 2 s of scrapes');
}

describe("metrics: prom-client's default names, types and labels", () => {
  let l: Listening;
  let scraped: Scraped;
  before(async () => {
    l = await startListener();
    // Two scrapes: the second closes a window of event-loop figures the first one opened.
    await l.scrape();
    await windowScrape(async () => (scraped = await l.scrape()).families);
  });
  after(() => l.close());

  for (const { name, type, labels, linux } of PROM_CLIENT_DEFAULTS) {
    it(`${name} is a ${type}${labels.length === 0 ? '' : ` labelled ${labels.join(', ')}`}`, () => {
      const family = scraped.families.get(name);
      assert.ok(family, `${name} is not exposed`);
      assert.equal(family.type, type);
      if (linux !== true || ON_LINUX) assert.ok(family.samples.length > 0, `${name} has no sample`);
      for (const sample of family.samples) {
        const names = Object.keys(sample.labels).filter((label) => !(type === 'histogram' && sample.name.endsWith('_bucket') && label === 'le'));
        assert.deepEqual(names.sort(), [...labels].sort(), `${sample.name} ${JSON.stringify(sample.labels)}`);
      }
    });
  }

  it("nodejs_gc_duration_seconds has prom-client's buckets and its four kinds from the start", () => {
    const samples = scraped.families.get('nodejs_gc_duration_seconds')?.samples ?? [];
    const buckets = samples.filter((s) => s.name === 'nodejs_gc_duration_seconds_bucket' && s.labels.kind === 'major').map((s) => s.labels.le);
    assert.deepEqual(buckets, ['0.001', '0.01', '0.1', '1', '2', '5', '+Inf']);
    assert.deepEqual([...new Set(samples.map((s) => s.labels.kind))].sort(), ['incremental', 'major', 'minor', 'weakcb']);
  });

  it('nodejs_version_info names the running Node.js, split as prom-client splits it', () => {
    const [major, minor, patch] = process.versions.node.split('.');
    assert.deepEqual(scraped.families.get('nodejs_version_info')?.samples, [
      { name: 'nodejs_version_info', labels: { version: process.version, major, minor, patch }, value: 1 },
    ]);
  });

  it('the figures agree with each other and with the process', () => {
    const f = scraped.families;
    const value = (name: string): number => only(f, name) ?? Number.NaN;
    assert.ok(Math.abs(value('process_cpu_user_seconds_total') + value('process_cpu_system_seconds_total') - value('process_cpu_seconds_total')) < 1e-9, 'user + system is the total');
    assert.ok(value('nodejs_heap_size_used_bytes') <= value('nodejs_heap_size_total_bytes'));
    assert.ok(value('nodejs_heap_size_used_bytes') > 0);
    const spaces = new Set(f.get('nodejs_heap_space_size_used_bytes')?.samples.map((s) => s.labels.space));
    assert.ok(spaces.has('new') && spaces.has('old'), [...spaces].join(', '));
    const handles = new Map(f.get('nodejs_active_handles')?.samples.map((s) => [s.labels.type, s.value]));
    assert.ok((handles.get('Server') ?? 0) >= 1, `the metrics listener is an active Server handle: ${JSON.stringify([...handles])}`);
    assert.ok(Math.abs(value('process_start_time_seconds') - (Date.now() / 1000 - process.uptime())) < 5);
    if (ON_LINUX) {
      assert.ok(value('process_resident_memory_bytes') <= value('process_virtual_memory_bytes'));
      assert.ok(value('process_open_fds') > 0 && value('process_open_fds') < value('process_max_fds'));
    }
  });

  it('the renamed families are gone: no nodejs_heap_used_bytes, no nodejs_eventloop_delay_seconds summary', () => {
    assert.ok(!scraped.families.has('nodejs_heap_used_bytes'));
    assert.ok(!scraped.families.has('nodejs_eventloop_delay_seconds'));
  });

  it('promtool check metrics accepts every runtime family', needs('promtool'), () => {
    const verdict = promtoolCheck(scraped.text);
    assert.equal(verdict.status, 0, verdict.output);
    assert.equal(verdict.output, '');
  });
});

describe('metrics: the event-loop figures cover the time since the previous scrape', () => {
  let l: Listening;
  before(async () => {
    l = await startListener();
  });
  after(() => l.close());

  it('a 200 ms stall between two scrapes shows in the max and p99 of the next one; a quiet scrape after it is lower', async () => {
    const scrape = async (): Promise<Map<string, ParsedFamily>> => (await l.scrape()).families;
    await windowScrape(scrape);
    stall(200);
    const stalled = await windowScrape(scrape);
    const max = only(stalled, 'nodejs_eventloop_lag_max_seconds') as number;
    assert.ok(max >= 0.15, `max ${max} s after a 200 ms stall`);
    assert.ok((only(stalled, 'nodejs_eventloop_lag_p99_seconds') as number) >= 0.15, `p99 ${only(stalled, 'nodejs_eventloop_lag_p99_seconds')} s after a 200 ms stall`);
    const quiet = await windowScrape(scrape);
    assert.ok((only(quiet, 'nodejs_eventloop_lag_max_seconds') as number) < max, `quiet max ${only(quiet, 'nodejs_eventloop_lag_max_seconds')} s, stalled ${max} s`);
    assert.ok((only(quiet, 'nodejs_eventloop_lag_p99_seconds') as number) < max);
  });

  it('a stall that starts in the same turn as a scrape still shows in the next one', async () => {
    const expose = async (): Promise<Map<string, ParsedFamily>> => parseExposition(l.metrics.registry.expose());
    await windowScrape(expose);
    l.metrics.registry.expose();
    stall(200);
    const max = only(await windowScrape(expose), 'nodejs_eventloop_lag_max_seconds') as number;
    assert.ok(max >= 0.15, `max ${max} s after a 200 ms stall right after a scrape`);
  });
});

describe('metrics: nodejs_gc_duration_seconds', () => {
  it('counts the collections that allocation causes', async () => {
    const metrics = createMetrics();
    try {
      const minor = (): number =>
        parseExposition(metrics.registry.expose())
          .get('nodejs_gc_duration_seconds')
          ?.samples.find((s) => s.name === 'nodejs_gc_duration_seconds_count' && s.labels.kind === 'minor')?.value ?? 0;
      const before = minor();
      let kept: unknown[] = [];
      for (let i = 0; i < 200 && minor() === before; i++) {
        // A few MB of short-lived objects fill the young generation: V8 scavenges (a minor GC).
        kept = Array.from({ length: 50_000 }, (_, j) => ({ j, text: `garbage ${j}` }));
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      assert.ok(kept.length > 0);
      assert.ok(minor() > before, 'no minor collection was counted after 200 rounds of allocation');
    } finally {
      metrics.close();
    }
  });
});
