import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSseParser, type SseEvent } from '../src/ui/page/sse-parser.ts';

/** Feeds the chunks to a fresh parser; the events it produced. */
function parse(...chunks: string[]): SseEvent[] {
  const events: SseEvent[] = [];
  const feed = createSseParser((event) => events.push(event));
  for (const chunk of chunks) feed(chunk);
  return events;
}

describe("the page's Server-Sent Events parser (WHATWG HTML, event stream parsing)", () => {
  it('one event per blank line, with its type, data and the last id', () => {
    assert.deepEqual(parse('id: 7\nevent: created\ndata: {"seq":7}\n\n'), [{ type: 'created', data: '{"seq":7}', lastEventId: '7' }]);
  });

  it('a frame split anywhere, even between CR and LF, is put back together', () => {
    const text = 'id: 8\r\nevent: updated\r\ndata: {"seq":8}\r\n\r\n';
    for (let cut = 1; cut < text.length; cut++) {
      assert.deepEqual(parse(text.slice(0, cut), text.slice(cut)), [{ type: 'updated', data: '{"seq":8}', lastEventId: '8' }], `cut at ${cut}`);
    }
  });

  it('comments (heartbeats) and frames without data dispatch nothing; the id still counts', () => {
    assert.deepEqual(parse(': heartbeat\n\n', 'id: 9\n\n', 'data: x\n\n'), [{ type: 'message', data: 'x', lastEventId: '9' }]);
  });

  it('several data lines join with a newline; no space after the colon is fine; a leading BOM is dropped', () => {
    assert.deepEqual(parse('\ufeffevent:reset\ndata:a\ndata: b\n\n'), [{ type: 'reset', data: 'a\nb', lastEventId: '' }]);
  });

  it('an event type does not carry over to the next frame, and an unfinished frame waits', () => {
    assert.deepEqual(parse('event: deleted\ndata: 1\n\ndata: 2\n\ndata: 3\n'), [
      { type: 'deleted', data: '1', lastEventId: '' },
      { type: 'message', data: '2', lastEventId: '' },
    ]);
  });
});
