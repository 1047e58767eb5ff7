import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeFailure, fuzz, FuzzFailure, type FuzzReport } from '../fuzz/fuzzer.ts';
import { startFuzzTarget } from '../fuzz/target.ts';

/** Fixed so CI is reproducible; `npm run fuzz` picks a fresh seed each run (and prints it). */
const SEED = 20_261_121;
const ITERATIONS = 1000;

describe('fuzz: 1,000 seeded mutated requests (npm run fuzz runs 20,000)', () => {
  it('every answer is a 2xx/4xx envelope, the server stays up, and GET /books equals what the acknowledged writes imply', { timeout: 60_000 }, async () => {
    const { target, close } = await startFuzzTarget();
    let report: FuzzReport;
    try {
      report = await fuzz(target, { seed: SEED, iterations: ITERATIONS });
    } catch (err) {
      if (err instanceof FuzzFailure) assert.fail(describeFailure(err));
      throw err;
    } finally {
      await close();
    }
    assert.equal(report.checkpoints, ITERATIONS / 100 + 1);
    const { created, updated, deleted } = report.acknowledged;
    assert.ok(created > 0 && updated > 0 && deleted > 0, `writes were acknowledged: ${JSON.stringify(report.acknowledged)}`);
    for (const status of ['200', '201', '400', '401', '404', '405']) assert.ok((report.statuses[status] ?? 0) > 0, `some ${status} answers: ${JSON.stringify(report.statuses)}`);
    const kinds = Object.keys(report.kinds);
    for (const kind of ['token', 'path', 'method', 'header', 'framing', 'body:invalid-utf8', 'body:proto-keys', 'body:deep-nesting', 'body:huge-number', 'body:truncated']) {
      assert.ok(kinds.includes(kind), `${kind} was exercised: ${kinds.join(', ')}`);
    }
  });
});

describe('fuzz: a failure names the run that replays it', () => {
  it('a difference found by the final check replays with exactly the iterations that were run', async () => {
    const { target, close } = await startFuzzTarget();
    try {
      // A book the fuzzer's model does not know: the final GET /books check must catch it.
      const res = await fetch(`http://127.0.0.1:${target.port}/book`, {
        method: 'POST',
        headers: { authorization: target.token, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Unknown', author: 'To the model', year: 2000 }),
      });
      assert.equal(res.status, 201);
      const failure = await fuzz(target, { seed: SEED, iterations: 0 }).then(
        () => assert.fail('the final check passed'),
        (err: unknown) => err,
      );
      assert.ok(failure instanceof FuzzFailure);
      assert.match(describeFailure(failure), /replay: npm run fuzz -- --seed \d+ --iterations 0$/);
    } finally {
      await close();
    }
  });
});
