import { LogRate, REPEATED_FAILURE_LOG_MS, type ChangeEntry, type Logger } from 'book-catalogue/store-kit';
import pg from 'pg';
import { entryOf, type ChangeRow, type Mirror } from './mirror.ts';
import type { QueryTimer } from './pool-metrics.ts';
import { RetryTimer } from './retry-timer.ts';
import { CHANNEL } from './schema.ts';
import { timedRead } from './timeouts.ts';

/** Changes per query while catching up. */
const PULL_ROWS = 2000;
/** Waits before connecting or reading the feed again: from the first retry to the longest, doubling. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 2000;

interface Waiter {
  seq: number;
  resolve: () => void;
}

export interface FollowerOptions {
  /** What `new pg.Client()` is given for the listening connection. */
  connection: pg.ClientConfig;
  pool: pg.Pool;
  mirror: Mirror;
  logger: Logger;
  timer: QueryTimer;
  /** The catalogue's changes are no longer in the table (this process fell too far behind): it must restart. */
  lost: (err: Error) => void;
}

/**
 * Keeps the mirror following the catalogue: a connection LISTENs on CHANNEL (every commit
 * notifies it), and each notification reads the changes after the mirror's seq, in seq order,
 * and applies them. No polling: between commits nothing is read. When the connection drops it is
 * opened again by itself, and the changes made meanwhile are read then.
 */
export class Follower {
  readonly #o: FollowerOptions;
  #client: pg.Client | undefined;
  #listening = false;
  #closed = false;
  #pulling: Promise<void> | undefined;
  #again = false;
  #waiters: Waiter[] = [];
  readonly #reconnect = new RetryTimer(RETRY_FIRST_MS, RETRY_MAX_MS);
  readonly #pullAgain = new RetryTimer(RETRY_FIRST_MS, RETRY_MAX_MS);
  /** Every notification reads the feed: while reads fail, one line per interval. */
  readonly #readFailures = new LogRate(REPEATED_FAILURE_LOG_MS);

  constructor(options: FollowerOptions) {
    this.#o = options;
  }

  /** Whether the connection is listening now: while it is not, the database cannot be reached. */
  get listening(): boolean {
    return this.#listening;
  }

  /** Resolves once listening; rejects with why the first connection failed. */
  async start(): Promise<void> {
    await this.#connect();
  }

  /**
   * Resolves once the mirror has applied every change up to `seq`, or at once while the database
   * cannot be reached (and for those waiting when the connection drops): memory is then all there
   * is to answer from, and what waits must not wait for the whole outage.
   */
  waitFor(seq: number): Promise<void> {
    if (this.#o.mirror.seq >= seq || !this.#listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.#waiters.push({ seq, resolve });
      this.pull();
    });
  }

  /**
   * A batch this process committed: applied at once when it follows the mirror's seq and nothing
   * is being read; otherwise the changes before it are read first, and it with them.
   */
  committed(entries: readonly ChangeEntry[]): Promise<void> {
    const first = entries[0];
    if (first !== undefined && this.#pulling === undefined && first.seq === this.#o.mirror.seq + 1) {
      this.#o.mirror.apply(entries);
      this.#wake();
      return Promise.resolve();
    }
    return this.waitFor(entries.at(-1)?.seq ?? 0);
  }

  /** Reads and applies the changes after the mirror's seq, until none follow. */
  pull(): void {
    if (this.#pulling !== undefined) {
      this.#again = true;
      return;
    }
    this.#pulling = this.#pullLoop().finally(() => {
      this.#pulling = undefined;
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#reconnect.cancel();
    this.#pullAgain.cancel();
    this.#listening = false;
    await this.#pulling;
    await this.#client?.end().catch(() => {});
    this.#releaseWaiters();
  }

  async #pullLoop(): Promise<void> {
    const { pool, mirror, timer, logger } = this.#o;
    do {
      this.#again = false;
      try {
        for (;;) {
          const { rows } = await timer.time('changes', () => pool.query<ChangeRow>(timedRead('SELECT seq, type, id, book FROM book_changes WHERE seq > $1 ORDER BY seq LIMIT $2', [mirror.seq, PULL_ROWS])));
          if (rows.length === 0) break;
          const entries = rows.map(entryOf);
          const gap = entries.findIndex((e, i) => e.seq !== mirror.seq + 1 + i);
          if (gap !== -1) {
            this.#o.lost(new Error(`the changes after seq ${mirror.seq} are no longer in book_changes (it holds seq ${entries[0]?.seq} on): this process fell too far behind; restart it`));
            // Memory will never reach what they wait for.
            this.#releaseWaiters();
            return;
          }
          mirror.apply(entries);
          this.#wake();
          if (rows.length < PULL_ROWS) break;
        }
      } catch (err) {
        // The read failed (the database went away, or a cancelled or timed-out query while the
        // listening connection stays up): it is read again from the mirror's seq, so reads and
        // writes waiting for those changes are answered without waiting for another commit.
        const unlogged = this.#readFailures.due();
        if (unlogged !== undefined) logger.warn('reading the change feed from the database failed; it is read again once the database answers', { err: err as Error, unlogged });
        // A reconnect reads the feed itself: only a read that failed while listening is tried again.
        if (!this.#closed && this.#listening) this.#pullAgain.schedule(() => this.pull());
        return;
      }
      this.#pullAgain.reset();
    } while (this.#again && !this.#closed);
  }

  /** Answers every waiter, from what memory holds. */
  #releaseWaiters(): void {
    for (const w of this.#waiters.splice(0)) w.resolve();
  }

  /** Answers the waiters the mirror has reached. */
  #wake(): void {
    const seq = this.#o.mirror.seq;
    if (this.#waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.#waiters) (w.seq <= seq ? w.resolve() : still.push(w));
    this.#waiters = still;
  }

  async #connect(): Promise<void> {
    const client = new pg.Client(this.#o.connection);
    client.on('error', (err) => this.#dropped(client, err));
    client.on('end', () => this.#dropped(client, undefined));
    client.on('notification', () => this.pull());
    this.#client = client;
    await client.connect();
    // This session idles between commits by design: a server-wide idle_session_timeout (PostgreSQL
    // 14 and later) would end it on every quiet spell, and readiness with it.
    await client.query("SELECT set_config('idle_session_timeout', '0', false) WHERE current_setting('server_version_num')::int >= 140000");
    await client.query(`LISTEN ${CHANNEL}`);
    // What memory held before the query: this process's own commits go on while it runs, and one
    // applied before its answer arrives would make a database that lost nothing look behind.
    const served = this.#o.mirror.seq;
    const { rows } = await client.query<{ seq: string }>('SELECT seq FROM catalogue');
    // Closed, or dropped while that answer came: the next connection checks again.
    if (this.#closed || client !== this.#client) return;
    const seq = Number(rows[0]?.seq ?? 0);
    if (seq < served) {
      // A failover to a replica that had not received the last commits: new writes would reuse seqs clients already have.
      this.#o.lost(new Error(`the database is at seq ${seq}, behind the seq ${served} this process has served: it lost acknowledged commits (a failover to a replica that was behind?); writes stop until this process restarts on what the database holds`));
    }
    this.#listening = true;
    this.#reconnect.reset();
    // Commits made while nobody listened notified no one.
    this.pull();
  }

  #dropped(client: pg.Client, err: Error | undefined): void {
    if (client !== this.#client || this.#closed) return;
    this.#client = undefined;
    if (this.#listening) this.#o.logger.error('lost the connection to PostgreSQL; connecting again', err === undefined ? {} : { err });
    this.#listening = false;
    this.#releaseWaiters();
    client.end().catch(() => {});
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    if (this.#closed) return;
    this.#reconnect.schedule(() => {
      this.#connect().catch(() => {
        this.#client?.end().catch(() => {});
        this.#client = undefined;
        this.#scheduleReconnect();
      });
    });
  }
}
