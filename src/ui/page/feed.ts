import { createSseParser } from './sse-parser.ts';

/** What changed, from GET /events: `created`, `updated`, `deleted`, or `reset` (reload everything). */
export type ChangeListener = (type: string) => void;
/**
 * `live`: following; `interrupted`: the stream ended, a new one is tried soon; `stopped`: the
 * service refused the token (it expired, or the signing secret changed), so nothing more comes
 * until the person signs in again; `off`: no feed (the service has none, or signed out).
 */
export type FeedStatus = 'off' | 'live' | 'interrupted' | 'stopped';
export type StatusListener = (status: FeedStatus) => void;

const RETRY_MIN_MS = 1000;
const RETRY_MAX_MS = 30_000;

let controller: AbortController | undefined;
let lastEventId = '';
let wakeUp: (() => void) | undefined;

/** A new token is in hand, or the person asked to resume: reconnect now instead of waiting. */
export function wake(): void {
  wakeUp?.();
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    wakeUp = resolve;
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

function untilSignedIn(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    wakeUp = resolve;
    signal.addEventListener('abort', () => resolve());
  });
}

/** One connection: resolves when it ends; 'absent' when the service has no change feed. */
async function connect(signal: AbortSignal, currentToken: () => string | undefined, onChange: ChangeListener, onLive: () => void): Promise<'ended' | 'absent' | 'refused'> {
  const token = currentToken();
  if (token === undefined) return 'refused';
  const headers: Record<string, string> = { authorization: token, accept: 'text/event-stream' };
  if (lastEventId !== '') headers['last-event-id'] = lastEventId;
  const response = await fetch('events', { headers, signal, cache: 'no-store' });
  if (response.status === 404 || response.status === 405) return 'absent';
  if (response.status === 401) return 'refused';
  if (response.status !== 200 || response.body === null) return 'ended';
  onLive();
  const parse = createSseParser((event) => {
    lastEventId = event.lastEventId;
    onChange(event.type);
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return 'ended';
    parse(value);
  }
}

/**
 * Follows the change feed while signed in, resuming from the last event seen (`Last-Event-ID`), so
 * nothing is missed across a reconnect; waits for a new sign-in when the token expires. Without a
 * feed on the service (404) it stops: the list then changes when the person reloads or pages.
 */
export function follow(token: () => string | undefined, onChange: ChangeListener, onStatus: StatusListener): void {
  stop();
  const own = new AbortController();
  controller = own;
  void (async () => {
    let delay = RETRY_MIN_MS;
    const connected = (): void => {
      delay = RETRY_MIN_MS;
      onStatus('live');
    };
    while (!own.signal.aborted) {
      const outcome = await connect(own.signal, token, onChange, connected).catch(() => 'ended' as const);
      if (own.signal.aborted) return;
      onStatus(outcome === 'absent' ? 'off' : outcome === 'refused' ? 'stopped' : 'interrupted');
      if (outcome === 'absent') return;
      if (outcome === 'refused') {
        await untilSignedIn(own.signal);
        delay = RETRY_MIN_MS;
        continue;
      }
      await pause(delay, own.signal);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    }
  })();
}

export function stop(): void {
  controller?.abort();
  controller = undefined;
  lastEventId = '';
}
