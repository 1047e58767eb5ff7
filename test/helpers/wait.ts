import assert from 'node:assert/strict';

/** Slack for a loaded 2-core machine: a wait fails with a message past it, never a timing assertion. */
export const WAIT_MS = 15_000;

/**
 * Resolves once `condition` holds (checked every 10 ms); fails naming `what` if it has not after
 * `ms` (WAIT_MS unless the behaviour itself promises a bound).
 */
export async function until(what: string, condition: () => boolean | Promise<boolean>, ms = WAIT_MS): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await condition())) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${ms / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `promise`, or a failure naming `what` if it has not settled after `ms` (WAIT_MS unless given). */
export async function within<T>(what: string, promise: Promise<T>, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms / 1000} s`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
