import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startApp } from './helpers/app.ts';
import { changeSeqs, openEvents, type SseFrame } from './helpers/sse-client.ts';

/*
 * docs/contract.md, "Change feed": what every stream starts with, for the clients that reconnect
 * by themselves (a browser's EventSource), so that a restart behind a proxy does not end them.
 * test/event-stream-browser.test.ts shows it in Chromium.
 */

const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'A. Author', year: 2001 });
const hasSeq = (seq: number) => (frames: SseFrame[]) => changeSeqs(frames).includes(seq);

describe('GET /events for clients that reconnect by themselves', () => {
  it('starts with retry: 15000, longer than a restart, and Cache-Control: no-store, no-transform', async () => {
    const app = await startApp();
    const stream = await openEvents(`${app.url}/events`, { authorization: app.token() });
    try {
      assert.equal(stream.headers.get('cache-control'), 'no-store, no-transform');
      await app.request('POST', '/book', { body: book('After the retry field') });
      await stream.until(hasSeq(1));
      assert.equal(stream.retry, '15000');
    } finally {
      stream.close();
      await app.close();
    }
  });

  it('the retry field is the eventStreams.retryMs option', async () => {
    const app = await startApp({ eventStreams: { retryMs: 2500 } });
    const stream = await openEvents(`${app.url}/events`, { authorization: app.token() });
    try {
      await app.request('POST', '/book', { body: book('After the retry field') });
      await stream.until(hasSeq(1));
      assert.equal(stream.retry, '2500');
    } finally {
      stream.close();
      await app.close();
    }
  });
});
