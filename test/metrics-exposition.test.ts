import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHelp, escapeLabelValue, formatValue } from '../src/metrics/exposition.ts';
import { Registry } from '../src/metrics/registry.ts';
import { promtoolCheck } from './helpers/promtool.ts';
import { needs } from './helpers/system-tools.ts';

describe('Prometheus text exposition 0.0.4', () => {
  it('escapes backslash, double quote and line feed in label values, and nothing else', () => {
    assert.equal(escapeLabelValue('a\\b"c\nd\te'), 'a\\\\b\\"c\\nd\te');
  });

  it('escapes backslash and line feed in HELP, but not a quote', () => {
    assert.equal(escapeHelp('a\\b\n"c"'), 'a\\\\b\\n"c"');
  });

  it('writes the special values as +Inf, -Inf and NaN', () => {
    assert.deepEqual([Infinity, -Infinity, NaN, 0.25, 3].map(formatValue), ['+Inf', '-Inf', 'NaN', '0.25', '3']);
  });

  it('writes HELP and TYPE once per family, then its samples', () => {
    const r = new Registry();
    const c = r.counter('jobs_total', 'Jobs done.', ['kind']);
    c.labels('a').inc();
    c.labels('b').inc(2);
    c.labels('a').inc();
    r.gauge('temperature_celsius', 'Heat.').set(-1.5);
    assert.equal(
      r.expose(),
      '# HELP jobs_total Jobs done.\n# TYPE jobs_total counter\njobs_total{kind="a"} 2\njobs_total{kind="b"} 2\n' +
        '# HELP temperature_celsius Heat.\n# TYPE temperature_celsius gauge\ntemperature_celsius -1.5\n',
    );
  });

  it('an unlabelled family is written as 0 before anything happened', () => {
    const r = new Registry();
    r.counter('events_total', 'Events.');
    assert.match(r.expose(), /^events_total 0$/m);
  });

  it('histograms have cumulative buckets, le="+Inf" equal to _count, _sum and _count', () => {
    const r = new Registry();
    const h = r.histogram('wait_seconds', 'Waits.', [0.1, 1], ['queue']);
    const child = h.labels('x"y');
    for (const v of [0.05, 0.1, 0.5, 2, 3]) child.observe(v);
    assert.equal(
      r.expose(),
      '# HELP wait_seconds Waits.\n# TYPE wait_seconds histogram\n' +
        'wait_seconds_bucket{queue="x\\"y",le="0.1"} 2\n' +
        'wait_seconds_bucket{queue="x\\"y",le="1"} 3\n' +
        'wait_seconds_bucket{queue="x\\"y",le="+Inf"} 5\n' +
        'wait_seconds_sum{queue="x\\"y"} 5.65\n' +
        'wait_seconds_count{queue="x\\"y"} 5\n',
    );
  });

  it('collect-time families read their value at every scrape', () => {
    const r = new Registry();
    let n = 1;
    r.collect({ name: 'queue_length', help: 'Queued.', type: 'gauge', read: () => n });
    r.collect({ name: 'per_disk_bytes', help: 'Bytes.', type: 'gauge', labelNames: ['disk'], read: () => [{ labels: ['sda'], value: n * 10 }] });
    assert.match(r.expose(), /^queue_length 1$/m);
    n = 2;
    assert.match(r.expose(), /^queue_length 2$/m);
    assert.match(r.expose(), /^per_disk_bytes\{disk="sda"\} 20$/m);
  });

  it('onScrape hooks run once per expose, before any family is read: families that share one reading agree', () => {
    const r = new Registry();
    let reads = 0;
    let reading = { used: 0, total: 0 };
    r.onScrape(() => {
      reads++;
      reading = { used: reads * 10, total: reads * 10 + 5 };
    });
    r.collect({ name: 'used_bytes', help: 'Used.', type: 'gauge', read: () => reading.used });
    r.collect({ name: 'total_bytes', help: 'Total.', type: 'gauge', read: () => reading.total });
    assert.match(r.expose(), /^used_bytes 10\n[^]*^total_bytes 15$/m);
    assert.match(r.expose(), /^used_bytes 20\n[^]*^total_bytes 25$/m);
    assert.equal(reads, 2);
  });

  it('refuses bad names, reserved labels, unsorted buckets, a name twice and the wrong number of label values', () => {
    const r = new Registry();
    assert.throws(() => r.counter('bad-name', 'x'), TypeError);
    assert.throws(() => r.counter('ok_total', 'x', ['__reserved']), TypeError);
    assert.throws(() => r.histogram('h_seconds', 'x', [1], ['le']), TypeError);
    assert.throws(() => r.histogram('h_seconds', 'x', [1, 1]), TypeError);
    r.gauge('once', 'x');
    assert.throws(() => r.gauge('once', 'x'), TypeError);
    assert.throws(() => r.counter('two_total', 'x', ['a', 'b']).labels('only-one'), TypeError);
  });

  it('promtool check metrics accepts every kind of family, escaped values included', needs('promtool'), () => {
    const r = new Registry();
    r.counter('jobs_total', 'Jobs \\ done\nsecond line.', ['kind']).labels('back\\slash "quoted"\nnewline').inc();
    r.gauge('temperature_celsius', 'Heat.').set(Infinity);
    r.histogram('wait_seconds', 'Waits.', [0.001, 0.5, 10]).observe(0.2);
    r.collect({ name: 'free_bytes', help: 'Free.', type: 'gauge', read: () => 1e21 });
    const verdict = promtoolCheck(r.expose());
    assert.equal(verdict.status, 0, verdict.output);
    assert.equal(verdict.output, '');
  });

  it('promtool notices a broken text (the check can fail)', needs('promtool'), () => {
    const verdict = promtoolCheck('# TYPE x counter\nx{a="unterminated} 1\n');
    assert.notEqual(verdict.status, 0);
  });
});
