import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { chargesItself } from '../transport/answer-bytes.ts';
import { sentBytes } from '../transport/socket-bytes.ts';
import type { Charge } from '../memory/budget.ts';
import type { ChangeFeed } from '../store/change-log.ts';
import type { ChangeEntry } from '../store/change.ts';
import { changeFrames, expiredFrame, HEARTBEAT, resetFrame, type SharedFrames } from './sse-frames.ts';

/** Changes per write while a stream catches up from the retained backlog. */
const BACKLOG_CHUNK = 256;

/** Why a stream ended, for the log: `cut`, its client did not read; `shed`, the memory budget was spent. */
export type StreamEnd = 'client' | 'expired' | 'draining' | 'cut' | 'shed';

/**
 * One client's stream. It follows the feed by a cursor (the last seq handed to the socket) rather
 * than a queue of its own: live changes that continue the cursor are written as the bytes shared by
 * every stream; a stream that is behind pulls from the feed's retention in chunks, and only while
 * the socket takes them (`write()` true; else wait for 'drain'). So no change is skipped or sent
 * twice at the seam between backlog and live changes, whatever races, and memory per stream stays
 * bounded. A client that does not read is cut once the frames committed while its socket refused
 * more pass `maxUnsentBytes`. What it owes its client while the socket refuses more (the bytes the
 * socket had not taken then, and the frames committed since) is its charge with the memory budget,
 * reported as it changes: O(1) per send, and nothing while the socket takes what it is given.
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
  /** The resume point asked for; undefined: live changes only. */
  readonly #since: number | undefined;
  #waiting = false;
  /** Bytes the socket had not taken when it refused more (`#waiting` began). */
  #queuedBytes = 0;
  #unsentBytes = 0;
  #ended = false;
  #charge: Charge | undefined;

  /** `since`: resume after it; undefined: live changes only. Nothing is sent before `start`. */
  constructor(res: ServerResponse, feed: ChangeFeed, since: number | undefined, maxUnsentBytes: number) {
    this.#res = res;
    this.#feed = feed;
    this.#maxUnsentBytes = maxUnsentBytes;
    this.#since = since;
    this.#cursor = since ?? feed.seq;
    this.#socket = res.socket;
    chargesItself(res);
    // The socket's when the shared frames are written to it directly (see #writeShared).
    (this.#socket ?? res).on('drain', () => {
      this.#waiting = false;
      this.#unsentBytes = 0;
      this.#charge?.set(0);
      this.#pump();
    });
  }

  /** Sends the backlog after `since` (or the reset frame), reporting what it holds through `charge` from now on. */
  start(charge: Charge): void {
    this.#charge = charge;
    if (this.#since !== undefined && this.#feed.after(this.#since, 0) === undefined) this.#reset();
    else this.#pump();
  }

  /** The last seq handed to the socket. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Bytes its connection has sent (the memory budget's measure of how fast it drains). */
  get sent(): number {
    const socket = this.#socket ?? this.#res.socket;
    return socket === null ? 0 : sentBytes(socket);
  }

  /**
   * The frames of the durable changes `first`..`last`, built once for every stream.
   * false: the stream was cut.
   */
  deliver(first: number, last: number, frames: SharedFrames): boolean {
    if (this.#ended || last <= this.#cursor) return true;
    if (this.#waiting) {
      this.#unsentBytes += frames.raw.length;
      this.#charge?.set(this.#queuedBytes + this.#unsentBytes);
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
    this.#charge?.release();
    if (why === 'cut' || why === 'shed') this.#res.destroy();
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
    if (!this.#res.write(text)) this.#refused();
  }

  /** The socket takes no more for now: what it holds is charged until 'drain'. */
  #refused(): void {
    this.#waiting = true;
    this.#queuedBytes = this.#res.writableLength;
    this.#charge?.set(this.#queuedBytes);
  }

  /**
   * Straight to the socket, past node:http's per-write framing, cork and next-tick uncork, work a
   * send would otherwise repeat for each of hundreds of streams. The head went first (flushed at
   * open), and the response's own writes reach the same socket in call order.
   */
  #writeShared(frames: SharedFrames): void {
    if (this.#socket === null) this.#write(frames.raw);
    else if (!this.#socket.write(this.#res.chunkedEncoding ? frames.chunk : frames.raw)) this.#refused();
  }
}
