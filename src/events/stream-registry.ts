import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log.ts';
import type { ChangeFeed } from '../store/change-log.ts';
import type { ChangeEntry } from '../store/change.ts';
import { EventStream, type StreamEnd } from './event-stream.ts';
import { changeFrames, writeEventStreamHead } from './sse.ts';

/** Limits of GET /events (AppOptions.eventStreams; each optional there). */
export interface EventStreamOptions {
  /** Open streams at most; one more is 503 `Too many event streams`. Default 256 (MAX_EVENT_STREAMS). */
  maxStreams: number;
  /** A comment frame this often, so proxies keep idle streams open. Default 15 s. */
  heartbeatMs: number;
  /**
   * A stream is cut once the frames committed while its socket refuses more pass this many bytes
   * (default 1 MiB, about 6,000 typical changes): the client resumes with Last-Event-ID.
   */
  maxUnsentBytes: number;
}

export const EVENT_STREAM_DEFAULTS: EventStreamOptions = { maxStreams: 256, heartbeatMs: 15_000, maxUnsentBytes: 1 << 20 };

interface Open {
  stream: EventStream;
  expiry: NodeJS.Timeout;
  reqId: string;
}

/**
 * Every open stream. It subscribes to the feed only while a stream is open, builds each batch's
 * frames once for all of them, and runs one heartbeat timer for all.
 */
export class StreamRegistry {
  readonly #feed: ChangeFeed;
  readonly #options: EventStreamOptions;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #open = new Set<Open>();
  #unsubscribe: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(feed: ChangeFeed, options: EventStreamOptions, logger: Logger, now: () => number) {
    this.#feed = feed;
    this.#options = options;
    this.#logger = logger;
    this.#now = now;
  }

  /** Streams open now (the metrics' book_catalogue_event_streams gauge). */
  get size(): number {
    return this.#open.size;
  }

  get full(): boolean {
    return this.#open.size >= this.#options.maxStreams;
  }

  /**
   * Starts a stream on `res` (its head written here), resuming after `since` when given, ending
   * with `event: expired` at `expSeconds` (the token's exp) by the app's clock.
   */
  open(req: IncomingMessage, res: ServerResponse, reqId: string, headers: Readonly<Record<string, string>> | undefined, since: number | undefined, expSeconds: number): void {
    writeEventStreamHead(res, reqId, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (this.#open.size === 0) this.#start();
    // Subscribed (above) before the backlog is read (in the constructor), in one turn: no gap.
    const stream = new EventStream(res, this.#feed, since, this.#options.maxUnsentBytes);
    const entry: Open = { stream, reqId, expiry: setTimeout(() => this.#end(entry, 'expired'), expSeconds * 1000 - this.#now()) };
    entry.expiry.unref();
    this.#open.add(entry);
    res.on('close', () => this.#end(entry, 'client'));
  }

  /** Ends every stream (the drain, the app closing): their clients resume elsewhere or later. */
  closeAll(): void {
    for (const entry of this.#open) this.#end(entry, 'draining');
  }

  #start(): void {
    this.#unsubscribe = this.#feed.subscribe((batch) => this.#deliver(batch));
    this.#heartbeat = setInterval(() => {
      for (const { stream } of this.#open) stream.heartbeat();
    }, this.#options.heartbeatMs);
    this.#heartbeat.unref();
  }

  #deliver(batch: readonly ChangeEntry[]): void {
    let text: string | undefined;
    const frames = (): string => (text ??= changeFrames(batch));
    for (const entry of this.#open) {
      if (!entry.stream.deliver(batch, frames)) this.#end(entry, 'cut');
    }
  }

  #end(entry: Open, why: StreamEnd): void {
    if (!this.#open.delete(entry)) return;
    clearTimeout(entry.expiry);
    entry.stream.end(why);
    if (why === 'cut') this.#logger.warn('event stream cut off: its client is not reading', { reqId: entry.reqId, seq: entry.stream.cursor });
    else this.#logger.debug('event stream ended', { reqId: entry.reqId, why });
    if (this.#open.size === 0) {
      this.#unsubscribe?.();
      clearInterval(this.#heartbeat);
    }
  }
}
