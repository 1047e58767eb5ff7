import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLoginThrottle, MAX_TRACKED_ADDRESSES, THROTTLE_WINDOW_MS } from '../src/auth/throttle.ts';

describe('login throttle (docs/contract.md, "Login throttling")', () => {
  it('allows attempts until the configured number of failures, then asks to wait', () => {
    let now = 1_000_000;
    const throttle = createLoginThrottle(3, () => now);
    for (let i = 0; i < 3; i++) {
      assert.equal(throttle.retryAfter('10.0.0.1'), 0);
      throttle.recordFailure('10.0.0.1');
    }
    assert.equal(throttle.retryAfter('10.0.0.1'), THROTTLE_WINDOW_MS / 1000);
    now += 60_000;
    assert.equal(throttle.retryAfter('10.0.0.1'), THROTTLE_WINDOW_MS / 1000 - 60);
    assert.equal(throttle.retryAfter('10.0.0.2'), 0, 'another address is not affected');
  });

  it('the window is fixed from the first counted failure and ends after 15 minutes', () => {
    let now = 0;
    const throttle = createLoginThrottle(2, () => now);
    throttle.recordFailure('a');
    now = THROTTLE_WINDOW_MS - 1;
    throttle.recordFailure('a');
    assert.equal(throttle.retryAfter('a'), 1);
    now = THROTTLE_WINDOW_MS;
    assert.equal(throttle.retryAfter('a'), 0);
    throttle.recordFailure('a');
    assert.equal(throttle.retryAfter('a'), 0, 'a new window starts with one failure');
  });

  it('0 disables throttling', () => {
    const throttle = createLoginThrottle(0, () => 0);
    for (let i = 0; i < 100; i++) throttle.recordFailure('a');
    assert.equal(throttle.retryAfter('a'), 0);
  });

  it(`tracks at most ${MAX_TRACKED_ADDRESSES} addresses, forgetting the oldest`, () => {
    const throttle = createLoginThrottle(1, () => 0);
    for (let i = 0; i <= MAX_TRACKED_ADDRESSES; i++) throttle.recordFailure(`addr-${i}`);
    assert.equal(throttle.retryAfter('addr-0'), 0, 'the oldest window was dropped to stay bounded');
    assert.ok(throttle.retryAfter(`addr-${MAX_TRACKED_ADDRESSES}`) > 0);
    assert.ok(throttle.retryAfter('addr-1') > 0);
  });

  it('past 10,000 tracked addresses, expired windows are swept before a new one is added', () => {
    let at = 0;
    const throttle = createLoginThrottle(1, () => at);
    for (let i = 0; i < 10_000; i++) throttle.recordFailure(`old-${i}`);
    assert.equal(throttle.tracked, 10_000);
    at = THROTTLE_WINDOW_MS;
    throttle.recordFailure('new');
    assert.equal(throttle.tracked, 1, 'the 10,000 expired windows went before the new one came in');
    assert.ok(throttle.retryAfter('new') > 0);
  });
});
