import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BookWriteGate } from '../src/books/etag.ts';

/** A store stand-in: a write becomes visible only when it completes, like a change after its fsync. */
function fakeBook() {
  const book = { version: 'v0' };
  const conditionalWrite = (expected: string, next: string) => (): Promise<string> => {
    if (book.version !== expected) return Promise.reject(new Error('412'));
    return new Promise((resolve) => setImmediate(() => resolve((book.version = next))));
  };
  return { book, conditionalWrite };
}

describe('BookWriteGate: conditional writes to one book are checked against the state they replace', () => {
  it('two conditional writes with the same tag queued behind a pending write: exactly one wins', async () => {
    const gate = new BookWriteGate();
    const { book, conditionalWrite } = fakeBook();
    let release!: () => void;
    gate.track(1, new Promise<void>((resolve) => (release = resolve)));
    const a = gate.exclusive(1, conditionalWrite('v0', 'a'));
    const b = gate.exclusive(1, conditionalWrite('v0', 'b'));
    release();
    const results = await Promise.allSettled([a, b]);
    assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
    assert.ok(book.version === 'a' || book.version === 'b');
  });

  it('a conditional write waits for an earlier write and then sees its result', async () => {
    const gate = new BookWriteGate();
    const { book, conditionalWrite } = fakeBook();
    const first = gate.track(1, conditionalWrite('v0', 'v1')());
    const second = gate.exclusive(1, conditionalWrite('v1', 'v2'));
    await first;
    assert.equal(await second, 'v2');
    assert.equal(book.version, 'v2');
  });

  it('writes to other books are not held up', async () => {
    const gate = new BookWriteGate();
    gate.track(1, new Promise<void>(() => {}));
    assert.equal(await gate.exclusive(2, () => Promise.resolve('done')), 'done');
  });

  it('a throw from the check rejects without registering a write', async () => {
    const gate = new BookWriteGate();
    await assert.rejects(gate.exclusive(1, () => { throw new Error('412'); }), /412/);
    assert.equal(await gate.exclusive(1, () => Promise.resolve('next')), 'next');
  });
});
