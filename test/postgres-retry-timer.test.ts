import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { RetryTimer } from '../packages/store-postgres/src/retry-timer.ts';

describe('RetryTimer (the PostgreSQL store\'s reconnects, feed reads and read barrier)', () => {
  it('one retry pending at a time, each wait twice the last up to the longest, from the first again after reset(); cancel() drops the pending one', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const timer = new RetryTimer(100, 300);
      const runs: string[] = [];
      timer.schedule(() => runs.push('a'));
      timer.schedule(() => runs.push('ignored: one is pending'));
      mock.timers.tick(99);
      assert.equal(runs.length, 0);
      mock.timers.tick(1);
      assert.deepEqual(runs, ['a']);
      timer.schedule(() => runs.push('b'));
      mock.timers.tick(199);
      assert.deepEqual(runs, ['a']);
      mock.timers.tick(1);
      timer.schedule(() => runs.push('c'));
      mock.timers.tick(300);
      assert.deepEqual(runs, ['a', 'b', 'c'], 'the third wait is capped at 300, not 400');
      timer.reset();
      timer.schedule(() => runs.push('cancelled'));
      timer.cancel();
      mock.timers.tick(1000);
      timer.reset();
      timer.schedule(() => runs.push('d'));
      mock.timers.tick(100);
      assert.deepEqual(runs, ['a', 'b', 'c', 'd']);
    } finally {
      mock.timers.reset();
    }
  });
});
