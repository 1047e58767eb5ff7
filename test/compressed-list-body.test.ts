import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { crc32, gunzipSync, inflateRawSync } from 'node:zlib';
import { compressedListBody } from '../src/books/compressed-list-body.ts';
import { listBody } from '../src/books/list-body.ts';
import { ANSWERS } from '../src/http/messages.ts';
import type { PiecewiseBody } from '../src/http/route.ts';
import { MemoryBudget } from '../src/memory/budget.ts';
import { bookJson } from '../src/model/book.ts';
import { BookIndex, PAGE, type ListSnapshot } from '../src/store/book-index.ts';

/*
 * GET /books gzip-encoded, piece by piece, without HTTP (docs/contract.md, "Compression"): what
 * the pieces hold, what each page keeps of its compressed form, and what the memory budget counts.
 */

/** `pages` full index pages; astral characters put surrogate pairs at piece boundaries. */
function index(pages: number): BookIndex {
  const books = new BookIndex();
  for (let id = 1; id < pages * PAGE; id++) books.set(id, bookJson({ id, title: `${'😀'.repeat(id % 9)} Volume ${id} ${'t'.repeat(id % 97)}`, author: 'Émile Zola', year: 1800 + (id % 200) }));
  return books;
}

/** Every piece of one answer, as a sender that writes each at once would take them. */
function send(body: PiecewiseBody): { bytes: Buffer; counted: number } {
  const pieces = body.chunks({ sent: () => 0, cut: () => assert.fail('no cut expected') });
  const out: Buffer[] = [];
  let counted = 0;
  for (let piece = pieces.next(); piece.done !== true; piece = pieces.next()) {
    out.push(Buffer.isBuffer(piece.value.text) ? piece.value.text : Buffer.from(piece.value.text));
    counted += piece.value.bytes;
  }
  return { bytes: Buffer.concat(out), counted };
}

function compressed(snapshot: ListSnapshot, budget = new MemoryBudget(2 ** 30)): PiecewiseBody {
  return compressedListBody(ANSWERS.booksRetrieved, snapshot, budget);
}

describe('a gzip-encoded list, piece by piece', () => {
  it('is one gzip member (RFC 1952) holding exactly the list as it is; its pieces count the bytes of the text they carry', () => {
    const snapshot = index(3).snapshot();
    const plain = send(listBody(ANSWERS.booksRetrieved, snapshot, new MemoryBudget(2 ** 30))).bytes;
    const body = compressed(snapshot);
    const { bytes, counted } = send(body);
    assert.ok(gunzipSync(bytes).equals(plain), 'it decodes to the list');
    // One member: its deflate stream alone is the whole list, and its trailer the list's CRC-32 and length.
    assert.ok(inflateRawSync(bytes.subarray(10, -8)).equals(plain), 'a single member holds it all');
    assert.equal(bytes.readUInt32LE(bytes.length - 8), crc32(plain));
    assert.equal(bytes.readUInt32LE(bytes.length - 4), plain.length);
    assert.equal(counted, plain.length);
    assert.equal(body.size, plain.length);
  });

  it('sent chunked the first time; once every page was compressed, its length is known and its bytes the same, compressed no more', () => {
    const snapshot = index(3).snapshot();
    const first = compressed(snapshot);
    assert.equal(first.length, undefined);
    const once = send(first).bytes;
    const second = compressed(snapshot);
    assert.equal(second.length, once.length);
    assert.ok(snapshot.pages.every((page) => page.deflated !== undefined && page.deflated.missing === 0), 'every page keeps its compressed form');
    const kept = snapshot.pages.map((page) => page.deflated?.slices.slice());
    assert.ok(send(second).bytes.equals(once), 'the same bytes again');
    assert.deepEqual(snapshot.pages.map((page) => page.deflated?.slices), kept, 'nothing compressed again');
  });

  it('a page changed since is compressed anew; the unchanged ones are sent as kept', () => {
    const books = index(3);
    const before = books.snapshot();
    send(compressed(before));
    books.set(PAGE + 5, bookJson({ id: PAGE + 5, title: 'changed', author: 'A', year: 2000 }));
    const after = books.snapshot();
    assert.equal(compressed(after).length, undefined, 'one page is still to compress');
    assert.deepEqual(after.pages.map((page, i) => page === before.pages[i]), [true, false, true]);
    assert.equal(after.pages[1]?.deflated, undefined);
    const plain = send(listBody(ANSWERS.booksRetrieved, after, new MemoryBudget(2 ** 30))).bytes;
    assert.ok(gunzipSync(send(compressed(after)).bytes).equals(plain));
    assert.notEqual(compressed(after).length, undefined);
  });

  it('a superseded page is compressed for the list sending it, never kept: what the budget counted for it stays all it holds', () => {
    const books = index(2);
    const old = books.snapshot();
    const pieces = compressed(old).chunks({ sent: () => 0, cut: () => {} });
    pieces.next();
    books.set(5, bookJson({ id: 5, title: 'changed', author: 'A', year: 2000 }));
    books.set(PAGE + 5, bookJson({ id: PAGE + 5, title: 'changed', author: 'A', year: 2000 }));
    books.snapshot();
    assert.ok(old.pages.every((page) => page.superseded));
    for (let piece = pieces.next(); piece.done !== true; piece = pieces.next());
    assert.ok(old.pages.every((page) => page.deflated === undefined), 'nothing kept beside a superseded text');
  });

  it('a superseded page a list has still to send is charged to it with its compressed form (list_snapshots)', () => {
    const books = index(4);
    const snapshot = books.snapshot();
    send(compressed(snapshot));
    const budget = new MemoryBudget(2 ** 30);
    const pieces = compressed(snapshot, budget).chunks({ sent: () => 0, cut: () => {} });
    // Its first piece (the envelope's head): the list holds every page.
    pieces.next();
    for (let key = 0; key < 4; key++) books.set(key * PAGE + 1, bookJson({ id: key * PAGE + 1, title: 'changed', author: 'A', year: 2000 }));
    books.snapshot();
    const pinned = snapshot.pages.reduce((sum, page) => sum + page.bytes + (page.deflated?.bytes ?? 0), 0);
    assert.ok(snapshot.pages.every((page) => (page.deflated?.bytes ?? 0) > 0));
    assert.equal(budget.heldBy('list_snapshots'), pinned);
    pieces.return?.();
    assert.equal(budget.heldBy('list_snapshots'), 0);
  });
});
