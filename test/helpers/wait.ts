import assert from 'node:assert/strict';

/** Slack for a loaded 2-core machine: a wait fails with a message past it, never a timing assertion. */
export const WAIT_MS = 15_000;

/** Resolves once `condition` holds (checked every 10 ms); fails naming `what` if it has not after WAIT_MS. */
export async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = performance.now() + WAIT_MS;
  while (!(await condition())) {
    if (performance.now() > deadline) assert.fail(`${what}: not within ${WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** `promise`, or a failure naming `what` if it has not settled after WAIT_MS. */
export async function within<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${WAIT_MS / 1000} s`)), WAIT_MS);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
