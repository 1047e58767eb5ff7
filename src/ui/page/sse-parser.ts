/**
 * Server-Sent Events framing (WHATWG HTML, "Parsing an event stream"), for a stream read with
 * fetch: EventSource cannot send the Authorization header. No DOM here, so it is tested in Node.
 */
export interface SseEvent {
  readonly type: string;
  readonly data: string;
  /** The last `id:` seen so far (the stream's resume point), '' before any. */
  readonly lastEventId: string;
}

/** Feed text chunks in as they arrive; each complete event is passed to `onEvent`. */
export function createSseParser(onEvent: (event: SseEvent) => void): (chunk: string) => void {
  let buffered = '';
  let type = '';
  let data: string[] = [];
  let lastEventId = '';
  let first = true;
  const line = (text: string): void => {
    if (text === '') {
      if (data.length > 0) onEvent({ type: type === '' ? 'message' : type, data: data.join('\n'), lastEventId });
      type = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') type = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id' && !value.includes('\0')) lastEventId = value;
  };
  return (chunk) => {
    buffered += chunk;
    if (first && buffered.length > 0) {
      if (buffered.charCodeAt(0) === 0xfeff) buffered = buffered.slice(1);
      first = false;
    }
    // Lines end with CRLF, LF or CR; a CR at the very end may be half of a CRLF still to come.
    for (;;) {
      const match = /\r\n|\n|\r(?!$)/.exec(buffered);
      if (match === null) return;
      line(buffered.slice(0, match.index));
      buffered = buffered.slice(match.index + match[0].length);
    }
  };
}
