import { getHeapStatistics } from 'node:v8';

/**
 * What a client can make the process hold, by kind: the label of the budget's metrics, and the
 * rows of SECURITY.md's "Memory budget" table.
 * - `list_snapshots`: page texts a full `GET /books` still has to send that writes have since
 *   replaced (the committed state it started from).
 * - `answers_in_flight`: answer bytes written to a connection that its socket has not taken yet.
 * - `event_streams`: frames committed for a `GET /events` stream its socket has not taken yet.
 * - `retained_changes`: the changes the feed keeps in memory: its fixed retention, and more
 *   while compaction cannot take a snapshot.
 */
export type ConsumerKind = 'list_snapshots' | 'answers_in_flight' | 'event_streams' | 'retained_changes';

export const CONSUMER_KINDS: readonly ConsumerKind[] = ['list_snapshots', 'answers_in_flight', 'event_streams', 'retained_changes'];

/** The default budget at most: what a 2 GB host can give on top of the catalogue itself (SECURITY.md, "Memory budget"). */
export const DEFAULT_MEMORY_BUDGET_BYTES = 256 * 1024 * 1024;

/**
 * The budget when none is set: a quarter of V8's heap limit, at most DEFAULT_MEMORY_BUDGET_BYTES.
 * V8 sizes its heap limit from the host's memory (a quarter of it) or from
 * `--max-old-space-size`; what clients hold is heap, so a budget past the limit would let them
 * crash the process instead of being cut, and the rest of the heap is the catalogue's.
 */
export function defaultMemoryBudgetBytes(): number {
  return Math.min(DEFAULT_MEMORY_BUDGET_BYTES, Math.floor(getHeapStatistics().heap_size_limit / 4));
}

/** One thing holding memory on a client's behalf. */
export interface Consumer {
  readonly kind: ConsumerKind;
  /** Bytes it has moved to its client since it started (0 for what never moves): how fast it drains. */
  moved(): number;
  /**
   * Frees what it holds, or as much as it can: ends the stream or the connection, drops history.
   * What it still holds afterwards it reports through its charge.
   */
  shed(): void;
}

/** A consumer's account with the budget. */
export interface Charge {
  /** Bytes held now. */
  readonly held: number;
  /** Reports what it holds now; when that spends the budget, consumers are shed until it is not. */
  set(bytes: number): void;
  /** It ended: nothing of it is counted any more. Idempotent. */
  release(): void;
}

interface Account extends Charge {
  held: number;
  readonly consumer: Consumer;
  readonly since: number;
  released: boolean;
}

/**
 * One memory budget for everything clients make the process hold beyond the committed catalogue
 * (docs/contract.md, "Memory budget"). Each consumer reports its bytes through its charge; the
 * running total is kept on every report, so a report costs O(1) until the budget is spent. Then
 * the consumer that would hold its memory longest goes first: the one with the most bytes per
 * byte per second it moves (a stalled stream before a slow one, a slow one before a fast one),
 * with retained changes, which never move, last of all. Committed data is never a consumer.
 */
export class MemoryBudget {
  readonly limit: number;
  readonly #accounts = new Set<Account>();
  readonly #heldBy = new Map<ConsumerKind, number>(CONSUMER_KINDS.map((kind) => [kind, 0]));
  readonly #shedBy = new Map<ConsumerKind, number>(CONSUMER_KINDS.map((kind) => [kind, 0]));
  readonly #now: () => number;
  readonly #onShed: ((kind: ConsumerKind, held: number) => void) | undefined;
  #held = 0;
  #shedding = false;

  constructor(limit: number, options: { now?: () => number; onShed?: (kind: ConsumerKind, held: number) => void } = {}) {
    this.limit = limit;
    this.#now = options.now ?? performance.now.bind(performance);
    this.#onShed = options.onShed;
  }

  /** Bytes held by every consumer together. */
  get held(): number {
    return this.#held;
  }

  heldBy(kind: ConsumerKind): number {
    return this.#heldBy.get(kind) ?? 0;
  }

  /** Consumers of this kind shed since the budget was made. */
  shedCount(kind: ConsumerKind): number {
    return this.#shedBy.get(kind) ?? 0;
  }

  /** Starts counting a consumer, at 0 bytes. */
  add(consumer: Consumer): Charge {
    const budget = this;
    const account: Account = {
      consumer,
      since: this.#now(),
      released: false,
      held: 0,
      set(bytes: number): void {
        if (account.released) return;
        budget.#move(account, bytes);
        if (budget.#held > budget.limit) budget.#shed();
      },
      release(): void {
        if (account.released) return;
        budget.#move(account, 0);
        account.released = true;
        budget.#accounts.delete(account);
      },
    };
    this.#accounts.add(account);
    return account;
  }

  #move(account: Account, bytes: number): void {
    const delta = bytes - account.held;
    account.held = bytes;
    this.#held += delta;
    const kind = account.consumer.kind;
    this.#heldBy.set(kind, (this.#heldBy.get(kind) ?? 0) + delta);
  }

  /** Sheds until the total is within the limit; a consumer that frees nothing is not asked twice. */
  #shed(): void {
    if (this.#shedding) return;
    this.#shedding = true;
    try {
      const asked = new Set<Account>();
      while (this.#held > this.limit) {
        const victim = this.#victim(asked);
        if (victim === undefined) return;
        asked.add(victim);
        const { kind } = victim.consumer;
        const before = victim.held;
        this.#shedBy.set(kind, (this.#shedBy.get(kind) ?? 0) + 1);
        victim.consumer.shed();
        this.#onShed?.(kind, before);
      }
    } finally {
      this.#shedding = false;
    }
  }

  #victim(asked: ReadonlySet<Account>): Account | undefined {
    const now = this.#now();
    let victim: Account | undefined;
    let worst = -1;
    for (const account of this.#accounts) {
      if (account.held === 0 || asked.has(account)) continue;
      const score = holdingSeconds(account, now);
      if (score > worst) {
        worst = score;
        victim = account;
      }
    }
    return victim;
  }
}

/**
 * How long the account would go on holding what it holds at the rate it has moved bytes so far
 * (at least one byte per second). Retained changes never move: they rank below every stream and
 * connection, however slow, so the feed's history goes only when no client's memory is left to cut.
 */
function holdingSeconds(account: Account, now: number): number {
  if (account.consumer.kind === 'retained_changes') return 0;
  const seconds = Math.max(now - account.since, 1) / 1000;
  const rate = Math.max(account.consumer.moved() / seconds, 1);
  return account.held / rate;
}
