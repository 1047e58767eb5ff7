/*
 * How bench:fanout's subscriber child (fanout-subscriber.ts) reads its streams: the bytes of each
 * read are scanned, not parsed, so the child costs the shared machine little.
 */

/**
 * What the subscriber child records over all its streams, cheaply enough that 200 streams at a few
 * thousand changes/s do not take the CPU the service is measured on (the child shares the machine).
 * The bench only creates and a stream gets every change in order, so the frames of one read are
 * for consecutive book ids: per read it keeps the first and the last id of its complete frames and
 * the time the read reached JavaScript (a slow reader counts as delay), found by two native
 * searches whatever the number of frames. So every read is checked against its stream's previous
 * one, and one read in CHECK_EVERY of each stream frame by frame (a gap, a repeat or a reorder
 * inside it). Each id's arrival at the last stream to get it is worked out at the end, outside the
 * measured slices.
 */
export class Arrivals {
  /** Per read: first id, last id, arrival time. */
  readonly #reads: number[] = [];
  frames = 0;
  /** Reads out of sequence (a gap, a repeat, a reorder; see streamScanner): must stay 0. */
  breaks = 0;

  record(first: number, last: number, at: number): void {
    this.#reads.push(first, last, at);
    this.frames += last - first + 1;
  }

  /** (book id, latest arrival) for every id some stream received. */
  entries(): [number, number][] {
    const reads = this.#reads;
    let top = 0;
    for (let i = 0; i < reads.length; i += 3) top = Math.max(top, reads[i + 1] as number);
    const latest = new Float64Array(top + 1);
    for (let i = 0; i < reads.length; i += 3) {
      const at = reads[i + 2] as number;
      for (let id = reads[i] as number; id <= (reads[i + 1] as number); id++) if (at > (latest[id] as number)) latest[id] = at;
    }
    const out: [number, number][] = [];
    latest.forEach((at, id) => {
      if (at > 0) out.push([id, at]);
    });
    return out;
  }
}

/** Each created frame's change JSON holds this once (the book's own JSON has no "type"), then the id. */
const CREATED_ID = Buffer.from('"type":"created","id":');
const FRAME_END = Buffer.from('\n\n');
/** A frame's first byte (`id: `); chunk framing between frames is hex digits and CRLF, never this. */
const ID_START = 0x69;

/**
 * One read in this many of each stream is checked frame by frame (the rest by first and last id):
 * a search per frame costs the child ~1 µs, and the child's time is the service's (shared cores).
 */
export const CHECK_EVERY = 64;

/** The decimal id that starts at `at` in `text`. */
function idAt(text: Buffer, at: number): number {
  let id = 0;
  for (let c = text[at] as number; c >= 0x30 && c <= 0x39; c = text[++at] as number) id = id * 10 + c - 0x30;
  return id;
}

/** Whether the created frames of `text` before `end`, from `at` (the first), hold `first`, `first` + 1, … in turn. */
function consecutive(text: Buffer, at: number, end: number, first: number): boolean {
  for (let expected = first; at !== -1 && at < end; at = text.indexOf(CREATED_ID, at + CREATED_ID.length), expected++) {
    if (idAt(text, at + CREATED_ID.length) !== expected) return false;
  }
  return true;
}

/**
 * Records the complete frames of each read of one stream (a partial last frame waits for the next
 * read); `checkEvery`: how often a read is checked frame by frame (CHECK_EVERY).
 */
export function streamScanner(arrivals: Arrivals, checkEvery = CHECK_EVERY): (chunk: Buffer) => void {
  let partial: Buffer | undefined;
  let previous: number | undefined;
  let reads = 0;
  return (chunk) => {
    const at = performance.timeOrigin + performance.now();
    const text = partial === undefined ? chunk : Buffer.concat([partial, chunk]);
    const end = text.lastIndexOf(FRAME_END);
    const complete = end === -1 ? 0 : end + FRAME_END.length;
    // Kept (copied: `text` may be the reused read buffer) only when a frame starts in it, at its
    // `id:`; after a chunked write it is only the chunk's CRLF (RFC 9112 §7.1), and joining that to
    // the next read would copy every read once more.
    partial = text.includes(ID_START, complete) ? Buffer.from(text.subarray(complete)) : undefined;
    const firstAt = text.indexOf(CREATED_ID);
    if (firstAt === -1 || firstAt >= complete) return;
    const first = idAt(text, firstAt + CREATED_ID.length);
    const last = idAt(text, text.lastIndexOf(CREATED_ID, complete - 1) + CREATED_ID.length);
    const inSequence = (previous === undefined || first === previous + 1) && last >= first && (++reads % checkEvery !== 0 || consecutive(text, firstAt, complete, first));
    if (!inSequence) arrivals.breaks++;
    previous = last;
    arrivals.record(first, last, at);
  };
}

/** What the subscriber child sends back at the end: see Arrivals. */
export interface FollowerReport {
  frames: number;
  breaks: number;
  latest: [number, number][];
}
