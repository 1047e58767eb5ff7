import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ChangeFeed } from '../store/change-log.ts';
import type { ChangeEntry } from '../store/change.ts';
import { changeFrames, expiredFrame, HEARTBEAT, resetFrame, type SharedFrames } from './sse.ts';

/** Changes per write while a stream catches up from the retained backlog. */
const BACKLOG_CHUNK = 256;

/** Why a stream ended, for the log. */
export type StreamEnd = 'client' | 'expired' | 'draining' | 'cut';

/**
 * One client's stream. It follows the feed by a cursor (the last seq handed to the socket) rather
 * than a queue of its own: live changes that continue the cursor are written as the bytes shared by
 * every stream; a stream that is behind pulls from the feed's retention in chunks, and only while
 * the socket takes them (`write()` true; else wait for 'drain'). So no change is skipped or sent
 * twice at the seam between backlog and live changes, whatever races, and memory per stream stays
 * bounded. A client that does not read is cut once the frames committed while its socket refused
 * more pass `maxUnsentBytes`.
 */
export class EventStream {
  readonly #res: ServerResponse;
  /**
   * The connection, when this response has it (so its head is on it): null for a request pipelined
   * behind an answer still being sent, whose response holds what is written until its turn.
   */
  readonly #socket: Socket | null;
  readonly #feed: ChangeFeed;
  readonly #maxUnsentBytes: number;
  #cursor: number;
  #waiting = false;
  #unsentBytes = 0;
  #ended = false;

  /** `since`: resume after it; undefined: live changes only. */
  constructor(res: ServerResponse, feed: ChangeFeed, since: number | undefined, maxUnsentBytes: number) {
    this.#res = res;
    this.#feed = feed;
    this.#maxUnsentBytes = maxUnsentBytes;
    this.#cursor = since ?? feed.seq;
    this.#socket = res.socket;
    // The socket's when the shared frames are written to it directly (see #writeShared).
    (this.#socket ?? res).on('drain', () => {
      this.#waiting = false;
      this.#unsentBytes = 0;
      this.#pump();
    });
    if (since !== undefined && feed.after(since, 0) === undefined) this.#reset();
    else this.#pump();
  }

  /** The last seq handed to the socket. */
  get cursor(): number {
    return this.#cursor;
  }

  /**
   * The frames of the durable changes `first`..`last`, built once for every stream.
   * false: the stream was cut.
   */
  deliver(first: number, last: number, frames: SharedFrames): boolean {
    if (this.#ended || last <= this.#cursor) return true;
    if (this.#waiting) {
      this.#unsentBytes += frames.raw.length;
      return this.#unsentBytes <= this.#maxUnsentBytes;
    }
    if (first === this.#cursor + 1) {
      this.#cursor = last;
      this.#writeShared(frames);
    } else {
      this.#pump();
    }
    return true;
  }

  heartbeat(): void {
    if (!this.#ended && !this.#waiting) this.#write(HEARTBEAT);
  }

  /** Ends the stream; `expired` first sends the frame saying so. */
  end(why: StreamEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    if (why === 'cut') this.#res.destroy();
    else this.#res.end(why === 'expired' ? expiredFrame(this.#cursor) : undefined);
  }

  /** Writes retained changes after the cursor until caught up or the socket is full. */
  #pump(): void {
    while (!this.#waiting && !this.#ended && this.#cursor < this.#feed.seq) {
      const entries = this.#feed.after(this.#cursor, BACKLOG_CHUNK);
      if (entries === undefined) {
        // Fell out of retention while waiting for the socket: the client must reload.
        this.#reset();
        return;
      }
      this.#cursor = (entries.at(-1) as ChangeEntry).seq;
      this.#write(changeFrames(entries));
    }
  }

  #reset(): void {
    this.#cursor = this.#feed.seq;
    this.#write(resetFrame(this.#cursor));
  }

  #write(text: string | Buffer): void {
    if (!this.#res.write(text)) this.#waiting = true;
  }

  /**
   * Straight to the socket, past node:http's per-write framing, cork and next-tick uncork, work a
   * send would otherwise repeat for each of hundreds of streams. The head went first (flushed at
   * open), and the response's own writes reach the same socket in call order.
   */
  #writeShared(frames: SharedFrames): void {
    if (this.#socket === null) this.#write(frames.raw);
    else if (!this.#socket.write(this.#res.chunkedEncoding ? frames.chunk : frames.raw)) this.#waiting = true;
  }
}
