import { WAIT_MS } from './wait.ts';

/** One Server-Sent Events frame as a client sees it; `comment` for a `:` line. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comment?: string;
}

export interface EventsClient {
  status: number;
  headers: Headers;
  /** Every frame received so far, but the `retry:` the stream starts with. */
  frames: SseFrame[];
  /** The value of the last `retry:` field received (a block holding it alone dispatches nothing, as in EventSource). */
  retry?: string;
  /** The body text when the answer is not a stream (an envelope). */
  text: string;
  /**
   * Resolves once `predicate` holds for the frames received (checked on each arrival); fails naming
   * `what` (by default the predicate's source) and the frames so far if it has not after WAIT_MS.
   */
  until(predicate: (frames: SseFrame[]) => boolean, what?: string): Promise<SseFrame[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

function parseFrame(block: string): SseFrame {
  const frame: SseFrame = {};
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) frame.comment = line.slice(1).trim();
    const colon = line.indexOf(': ');
    if (colon === -1) continue;
    const field = line.slice(0, colon);
    if (field === 'id' || field === 'event' || field === 'data') frame[field] = line.slice(colon + 2);
  }
  return frame;
}

/** GET `url` with `headers` through fetch (as a page does, since EventSource sends no Authorization). */
export async function openEvents(url: string, headers: Record<string, string>): Promise<EventsClient> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  const frames: SseFrame[] = [];
  const waiters = new Set<() => void>();
  const client: EventsClient = {
    status: res.status,
    headers: res.headers,
    frames,
    text: '',
    until(predicate, what = predicate.toString()) {
      return new Promise((resolve, reject) => {
        const fail = (why: string): void => {
          if (waiters.delete(check)) reject(new Error(`${what}: ${why}; frames: ${JSON.stringify(frames)}`));
        };
        const late = setTimeout(() => fail(`not within ${WAIT_MS / 1000} s`), WAIT_MS);
        const check = (): void => {
          if (predicate(frames)) {
            clearTimeout(late);
            waiters.delete(check);
            clearTimeout(late);
            resolve(frames);
          }
        };
        waiters.add(check);
        check();
        void client.ended.then(() => {
          clearTimeout(late);
          fail('the stream ended first');
        });
      });
    },
    ended: Promise.resolve(),
    close: () => abort.abort(),
  };
  if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    client.text = await res.text();
    return client;
  }
  client.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const retry = /^retry: (.*)$/.exec(block);
          if (retry === null) frames.push(parseFrame(block));
          else client.retry = retry[1] as string;
        }
        for (const check of [...waiters]) check();
      }
    } catch {
      // Aborted by close(), or cut by the server: both end the stream.
    }
  })();
  return client;
}

/** The seqs of the change frames (those with an id and a change event). */
export function changeSeqs(frames: SseFrame[]): number[] {
  return frames.filter((f) => f.event === 'created' || f.event === 'updated' || f.event === 'deleted').map((f) => Number(f.id));
}
