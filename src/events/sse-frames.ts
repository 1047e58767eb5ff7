import type { ServerResponse } from 'node:http';
import { answerHead } from '../http/respond.ts';
import { changeJson, type ChangeEntry } from '../store/change.ts';

/**
 * Server-Sent Events framing (WHATWG HTML, "Server-sent events"). A change's JSON never holds a
 * raw newline (JSON.stringify escapes them), so each is one `data:` line. `id:` goes only on
 * frames that are real resume points: a change, and `reset` (live changes follow from its seq).
 */
export function changeFrames(entries: readonly ChangeEntry[]): string {
  let text = '';
  for (const e of entries) text += `id: ${e.seq}\nevent: ${e.type}\ndata: ${changeJson(e)}\n\n`;
  return text;
}

const CRLF = Buffer.from('\r\n', 'latin1');

/**
 * The frames of one send, built once for every stream: as they are, and as one HTTP/1.1 chunk
 * (RFC 9112 §7.1) for the streams whose response is chunked, so each stream is one socket write.
 */
export class SharedFrames {
  readonly raw: Buffer;
  #chunk: Buffer | undefined;

  constructor(text: string) {
    this.raw = Buffer.from(text, 'utf8');
  }

  get chunk(): Buffer {
    return (this.#chunk ??= Buffer.concat([Buffer.from(`${this.raw.length.toString(16)}\r\n`, 'latin1'), this.raw, CRLF]));
  }
}

/** The client's seq is no longer retained: reload the books, then follow from `seq`. */
export function resetFrame(seq: number): string {
  return `id: ${seq}\nevent: reset\ndata: ${seq}\n\n`;
}

/**
 * The token expired: sign in again and resume from `seq` (the last change sent). An event with
 * no data is never dispatched by EventSource, hence the seq as data.
 */
export function expiredFrame(seq: number): string {
  return `event: expired\ndata: ${seq}\n\n`;
}

/** A comment line: ignored by clients, keeps proxies from timing the connection out. */
export const HEARTBEAT = ': heartbeat\n\n';

/**
 * The head of a stream and its first bytes: the headers every answer carries, but
 * `text/event-stream` and no length. `Cache-Control: no-transform` keeps proxies that rewrite or
 * compress answers from holding frames back. `Referrer-Policy: no-referrer`: a stream opened with an
 * event ticket in its URL (docs/contract.md, "Change feed") names it nowhere else. `Connection: close`:
 * the connection ends with the stream, so a drain or an expiry frees it at once.
 * `X-Accel-Buffering: no` asks nginx-style proxies not to hold frames back. Then `retry:`, the
 * reconnection time (WHATWG HTML, "Server-sent events"), which also flushes the head.
 */
export function writeEventStreamHead(res: ServerResponse, requestId: string, extraHeaders: Readonly<Record<string, string>> | undefined, retryMs: number): void {
  const headers = answerHead('text/event-stream; charset=utf-8', undefined, requestId, 'no-store, no-transform');
  headers.push('referrer-policy', 'no-referrer', 'x-accel-buffering', 'no');
  if (extraHeaders !== undefined) {
    for (const name in extraHeaders) if (name !== 'connection') headers.push(name, extraHeaders[name] as string);
  }
  headers.push('connection', 'close');
  res.writeHead(200, headers);
  // An answer to HEAD has no body: Node sends its head at `end()` and ignores this write.
  res.write(retryField(retryMs));
}

/**
 * A browser's EventSource waits this long before it reconnects (3 s in Chromium when no `retry:`
 * came). A reconnect that meets a proxy's 502 while the service restarts is never tried again
 * (WHATWG HTML: only a network error is retried), so the time must outlast a restart: see
 * EVENT_STREAM_DEFAULTS.retryMs.
 */
function retryField(ms: number): string {
  return `retry: ${ms}\n\n`;
}
