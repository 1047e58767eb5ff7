import { THROTTLE_WINDOW_MS, type LoginThrottle } from './throttle.ts';

/**
 * Failed logins from all addresses together per window, as a multiple of the per-address bound:
 * room for many users mistyping, far below what guessing needs.
 */
export const SERVICE_WIDE_FACTOR = 10;

/**
 * Adds a bound on failed logins from all addresses together to a per-address throttle
 * (docs/contract.md, "Login throttling"): guesses spread over many addresses (a botnet, a page
 * running in many visitors' browsers, a rotating IPv6 prefix) each stay under the per-address
 * bound but not under this one. The same fixed 15-minute window, from the first counted failure;
 * `maxFailures` 0 disables it. The price: such an attack can stop every login for one window.
 */
export function withServiceWideBound(perAddress: LoginThrottle, maxFailures: number, now: () => number = Date.now): LoginThrottle {
  let start = 0;
  let failures = 0;
  const current = (at: number): number => {
    if (failures > 0 && at - start >= THROTTLE_WINDOW_MS) failures = 0;
    return failures;
  };
  return {
    retryAfter(address) {
      const at = now();
      if (maxFailures > 0 && current(at) >= maxFailures) return Math.max(1, Math.ceil((start + THROTTLE_WINDOW_MS - at) / 1000));
      return perAddress.retryAfter(address);
    },
    recordFailure(address) {
      perAddress.recordFailure(address);
      if (maxFailures === 0) return;
      const at = now();
      if (current(at) === 0) start = at;
      failures++;
    },
    get tracked() {
      return perAddress.tracked;
    },
  };
}
