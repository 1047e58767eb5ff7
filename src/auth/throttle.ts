/** docs/contract.md, "Login throttling": a fixed 15-minute window from an address's first counted failure. */
export const THROTTLE_WINDOW_MS = 15 * 60 * 1000;

/** Failed logins per client address per window before 429, unless the embedder or LOGIN_MAX_FAILURES says otherwise. */
export const DEFAULT_LOGIN_MAX_FAILURES = 20;

/** Beyond this many tracked addresses, expired windows are swept before a new one is added. */
const SWEEP_AT = 10_000;

/**
 * A hard bound on tracked addresses (an attacker controls how many it uses, IPv6 gives plenty):
 * past it the oldest window is forgotten, so memory stays bounded at the cost of that address's count.
 */
export const MAX_TRACKED_ADDRESSES = 100_000;

interface Window {
  start: number;
  failures: number;
}

export interface LoginThrottle {
  /** Seconds until the address may try again, or 0 when it may try now. */
  retryAfter(address: string): number;
  recordFailure(address: string): void;
  /** Addresses with a window held in memory, expired ones not yet swept included. */
  readonly tracked: number;
}

/** Counts failed logins per client address; `maxFailures` 0 disables it. */
export function createLoginThrottle(maxFailures: number, now: () => number = Date.now): LoginThrottle {
  const windows = new Map<string, Window>();
  const live = (address: string, at: number): Window | undefined => {
    const w = windows.get(address);
    if (w !== undefined && at - w.start >= THROTTLE_WINDOW_MS) {
      windows.delete(address);
      return undefined;
    }
    return w;
  };
  return {
    retryAfter(address) {
      if (maxFailures === 0) return 0;
      const at = now();
      const w = live(address, at);
      if (w === undefined || w.failures < maxFailures) return 0;
      return Math.max(1, Math.ceil((w.start + THROTTLE_WINDOW_MS - at) / 1000));
    },
    recordFailure(address) {
      if (maxFailures === 0) return;
      const at = now();
      const w = live(address, at);
      if (w !== undefined) {
        w.failures++;
        return;
      }
      if (windows.size >= SWEEP_AT) {
        // Windows are inserted in start order and never re-dated, so the expired ones come first.
        for (const [key, value] of windows) {
          if (at - value.start < THROTTLE_WINDOW_MS) break;
          windows.delete(key);
        }
        if (windows.size >= MAX_TRACKED_ADDRESSES) windows.delete(windows.keys().next().value as string);
      }
      windows.set(address, { start: at, failures: 1 });
    },
    get tracked() {
      return windows.size;
    },
  };
}
