import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { describe, it } from 'node:test';
import { behindAStream, chargesItself } from '../src/transport/answer-bytes.ts';

/** A response on no connection, as Node makes one for a request pipelined behind another. */
function response(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

/** A connection whose answer being sent is `current`. */
function sending(current: ServerResponse | null): Socket {
  return Object.assign(new Socket(), { _httpMessage: current });
}

describe('behindAStream: whether a request would follow an event stream on its connection', () => {
  it('an event stream being sent or held is one; an ordinary answer, or none, is not', () => {
    const stream = response();
    chargesItself(stream);
    assert.equal(behindAStream(sending(stream), undefined), true);
    assert.equal(behindAStream(sending(response()), [response(), stream]), true);
    assert.equal(behindAStream(sending(response()), [response()]), false);
    assert.equal(behindAStream(sending(null), undefined), false);
  });

  it('a stream that has ended is not: the answers after it will be sent', () => {
    const stream = response();
    chargesItself(stream);
    stream.end();
    assert.equal(behindAStream(sending(stream), undefined), false);
    assert.equal(behindAStream(sending(null), [stream]), false);
  });
});
