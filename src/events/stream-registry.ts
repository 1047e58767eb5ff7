import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import type { ChangeFeed } from '../store/change-log.ts';
import type { ChangeEntry } from '../store/change.ts';
import { EventStream, type StreamEnd } from './event-stream.ts';
import { changeFrames, SharedFrames, writeEventStreamHead } from './sse-frames.ts';

/** Limits of GET /events (AppOptions.eventStreams; each optional there). */
export interface EventStreamOptions {
  /** Open streams at most; one more is 503 `Too many event streams`. Default 256 (MAX_EVENT_STREAMS). */
  maxStreams: number;
  /**
   * Open streams from one client address at most; one more is 503 `Too many event streams` too.
   * Default 16 (MAX_EVENT_STREAMS_PER_ADDRESS); 0: no limit, for a service behind a reverse proxy.
   */
  maxStreamsPerAddress: number;
  /** A comment frame this often, so proxies keep idle streams open. Default 15 s. */
  heartbeatMs: number;
  /**
   * A stream is cut once the frames committed while its socket refuses more pass this many bytes
   * (default 1 MiB, about 6,000 typical changes): the client resumes with Last-Event-ID.
   */
  maxUnsentBytes: number;
  /**
   * Changes made durable within the coalescing window of the last send go out together, as one
   * write per stream; a change after a quiet spell is sent on the next event-loop turn. Under a
   * stream of writes each stream gets one write per window instead of one per durable batch, which
   * is what makes hundreds of streams cheap (a socket write costs about the same for one frame as
   * for many). The window is this many ms (default 5), or FANOUT_SHARE times as long as the last
   * send took if that is longer, so the fan-out keeps a bounded share of the thread the writes
   * need too; at most `maxCoalesceMs`.
   */
  coalesceMs: number;
  /**
   * How far a send's cost may stretch the window: a bound on what it adds to delivery delay
   * (default 35, so that with the send itself a change reaches 200 streams within ~40 ms at p99).
   */
  maxCoalesceMs: number;
  /**
   * The `retry:` each stream starts with: how long a browser's EventSource waits before it
   * reconnects. Default 15 s: a restart ends every stream as its drain starts, and the drain may
   * last 10 s before the process exits and the next one starts (docs/contract.md, "Change feed").
   * A reconnect that comes sooner meets a proxy's 502, and closes an EventSource for good.
   */
  retryMs: number;
}

export const EVENT_STREAM_DEFAULTS: EventStreamOptions = { maxStreams: 256, maxStreamsPerAddress: 16, heartbeatMs: 15_000, maxUnsentBytes: 1 << 20, coalesceMs: 5, maxCoalesceMs: 35, retryMs: 15_000 };

/**
 * The coalescing window is at least this many times the last send's duration: sends then take at
 * most 1/FANOUT_SHARE of the thread's time, however many streams are open, until the window
 * reaches maxCoalesceMs. The time a send is measured at leaves out kernel work it causes afterwards
 * (the receivers' acknowledgements and wakeups), so the fan-out's real share is larger than that.
 */
export const FANOUT_SHARE = 10;

/** The window after a send that took `sendMs` (see EventStreamOptions.coalesceMs). */
export function coalescingWindow(options: Pick<EventStreamOptions, 'coalesceMs' | 'maxCoalesceMs'>, sendMs: number): number {
  return Math.max(options.coalesceMs, Math.min(options.maxCoalesceMs, FANOUT_SHARE * sendMs));
}

interface Open {
  stream: EventStream;
  expiry: NodeJS.Timeout;
  reqId: string;
  /** Its client's address, counted while per-address limits apply. */
  address: string | undefined;
}

/**
 * Every open stream. It subscribes to the feed only while a stream is open, gathers the changes
 * published until the next send (see `coalesceMs`), builds their frames once (SharedFrames) for
 * every stream, and runs one heartbeat timer for all. Each stream is an `event_streams` consumer
 * of the memory budget; one the budget sheds ends like one cut for not reading.
 */
export class StreamRegistry {
  readonly #feed: ChangeFeed;
  readonly #options: EventStreamOptions;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #monotonic: () => number;
  readonly #open = new Set<Open>();
  readonly #budget: MemoryBudget;
  /** Open streams by client address (only while maxStreamsPerAddress applies). */
  readonly #byAddress = new Map<string, number>();
  #unsubscribe: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Durable changes not yet sent, contiguous seqs. */
  #pending: ChangeEntry[] = [];
  #cancelSend: (() => void) | undefined;
  /** When the last send started, on the monotonic clock. */
  #lastSend = -Infinity;
  /** The coalescing window that follows it (see EventStreamOptions.coalesceMs). */
  #window = 0;

  /** `now`: the app's clock (token expiry); `monotonic`: ms for the coalescing window, performance.now(). */
  constructor(
    feed: ChangeFeed,
    options: EventStreamOptions,
    logger: Logger,
    now: () => number,
    budget: MemoryBudget,
    monotonic: () => number = () => performance.now(),
  ) {
    this.#feed = feed;
    this.#budget = budget;
    this.#options = options;
    this.#logger = logger;
    this.#now = now;
    this.#monotonic = monotonic;
  }

  /** Streams open now (the metrics' book_catalogue_event_streams gauge). */
  get size(): number {
    return this.#open.size;
  }

  /** Whether a stream for `req` would be one too many: in all, or from its client's address. */
  refuses(req: IncomingMessage): boolean {
    if (this.#open.size >= this.#options.maxStreams) return true;
    const max = this.#options.maxStreamsPerAddress;
    return max > 0 && (this.#byAddress.get(req.socket.remoteAddress as string) ?? 0) >= max;
  }

  /**
   * Starts a stream on `res` (its head written here), resuming after `since` when given, ending
   * with `event: expired` at `expSeconds` (the token's exp) by the app's clock.
   */
  open(req: IncomingMessage, res: ServerResponse, reqId: string, headers: Readonly<Record<string, string>> | undefined, since: number | undefined, expSeconds: number): void {
    writeEventStreamHead(res, reqId, headers, this.#options.retryMs);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (this.#open.size === 0) this.#start();
    const stream = new EventStream(res, this.#feed, since, this.#options.maxUnsentBytes);
    const address = this.#options.maxStreamsPerAddress > 0 ? req.socket.remoteAddress : undefined;
    const entry: Open = { stream, reqId, address, expiry: setTimeout(() => this.#end(entry, 'expired'), expSeconds * 1000 - this.#now()) };
    entry.expiry.unref();
    this.#open.add(entry);
    if (address !== undefined) this.#byAddress.set(address, (this.#byAddress.get(address) ?? 0) + 1);
    // The client's FIN ends its stream: half-open connections are allowed (docs/contract.md,
    // "Transport"), and a stream has no last byte after which its connection would close. No
    // request after it on its connection is run, so this is the connection's only stream.
    const { socket } = req;
    const closed = (): void => {
      socket.off('end', closed);
      this.#end(entry, 'client');
    };
    socket.once('end', closed);
    res.on('close', closed);
    // A response queued behind another (pipelining) gets no 'close' of its own when the connection
    // closes first; its request does.
    req.on('close', closed);
    // Subscribed (above) before the backlog is read (here), in one turn: no gap.
    stream.start(this.#budget.add({ kind: 'event_streams', moved: () => stream.sent, shed: () => this.#end(entry, 'shed') }));
    // A FIN that came before this route ran: the backlog above is sent, then the stream ends. A
    // connection closed by then emitted its 'close' before the listeners above were there.
    if (socket.readableEnded || socket.destroyed) closed();
  }

  /** Ends every stream (the drain, the app closing): their clients resume elsewhere or later. */
  closeAll(): void {
    for (const entry of this.#open) this.#end(entry, 'draining');
  }

  #start(): void {
    this.#unsubscribe = this.#feed.subscribe((batch) => this.#publish(batch));
    this.#heartbeat = setInterval(() => {
      for (const { stream } of this.#open) stream.heartbeat();
    }, this.#options.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** Called by the feed inside the store's commit: only queues, so the commit is not held up. */
  #publish(batch: readonly ChangeEntry[]): void {
    for (const entry of batch) this.#pending.push(entry);
    if (this.#cancelSend !== undefined) return;
    const wait = this.#lastSend + this.#window - this.#monotonic();
    if (wait <= 0) {
      const immediate = setImmediate(() => this.#send());
      this.#cancelSend = () => clearImmediate(immediate);
    } else {
      const timer = setTimeout(() => this.#send(), wait);
      this.#cancelSend = () => clearTimeout(timer);
    }
  }

  #send(): void {
    this.#cancelSend = undefined;
    const started = this.#monotonic();
    this.#lastSend = started;
    const changes = this.#pending;
    this.#pending = [];
    const frames = new SharedFrames(changeFrames(changes));
    const first = (changes[0] as ChangeEntry).seq;
    const last = (changes.at(-1) as ChangeEntry).seq;
    for (const entry of this.#open) {
      if (!entry.stream.deliver(first, last, frames)) this.#end(entry, 'cut');
    }
    // A socket its response corked this turn (a heartbeat, a backlog chunk) flushes on a tick queued
    // above: this one, queued after them, sees the send's whole cost.
    process.nextTick(() => {
      this.#window = coalescingWindow(this.#options, this.#monotonic() - started);
    });
  }

  #end(entry: Open, why: StreamEnd): void {
    if (!this.#open.delete(entry)) return;
    clearTimeout(entry.expiry);
    entry.stream.end(why);
    const { address } = entry;
    if (address !== undefined) {
      const left = (this.#byAddress.get(address) as number) - 1;
      if (left === 0) this.#byAddress.delete(address);
      else this.#byAddress.set(address, left);
    }
    if (why === 'cut') this.#logger.warn('event stream cut off: its client is not reading', { reqId: entry.reqId, seq: entry.stream.cursor });
    else if (why === 'shed') this.#logger.warn('event stream cut off: the memory budget is spent and it moved least', { reqId: entry.reqId, seq: entry.stream.cursor });
    else this.#logger.debug('event stream ended', { reqId: entry.reqId, why });
    if (this.#open.size === 0) {
      this.#unsubscribe?.();
      clearInterval(this.#heartbeat);
      this.#cancelSend?.();
      this.#cancelSend = undefined;
      this.#pending = [];
    }
  }
}
