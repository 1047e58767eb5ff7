import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { chargedWalk } from '../src/books/charged-walk.ts';
import { search } from '../src/books/search.ts';
import { MemoryBudget } from '../src/memory/budget.ts';
import { bookJson } from '../src/model/book.ts';
import { BookIndex, PAGE, type ListSnapshot } from '../src/store/book-index.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** `pages` full index pages of books whose JSON is about `size` bytes each. */
function index(pages: number, size = 100): BookIndex {
  const books = new BookIndex();
  for (let id = 1; id < pages * PAGE; id++) books.set(id, bookJson({ id, title: 't'.repeat(size), author: 'A', year: 2000 }));
  return books;
}

/** One book changed in every page. */
function writeEveryPage(books: BookIndex, round: number): void {
  for (let key = 0; key * PAGE < books.size; key++) books.set(key * PAGE + 1, bookJson({ id: key * PAGE + 1, title: `round ${round}`, author: 'A', year: 2000 }));
}

/** Then the next list: it rebuilds every page's text, and the texts of the last state are superseded. */
function replaceEveryPage(books: BookIndex, round: number): ListSnapshot {
  writeEveryPage(books, round);
  return books.snapshot();
}

/** A walk with a fixed `moved` figure (its rate), reporting into `charges`. */
function walk(snapshot: ListSnapshot, moved = 0): { charged: () => number; passed: () => void; close: () => void } {
  let charged = 0;
  const w = snapshot.walk({ moved: () => moved, set: (bytes) => (charged = bytes) });
  return { charged: () => charged, passed: () => w.passed(), close: () => w.close() };
}

const bytesOf = (snapshot: ListSnapshot, from = 0, to = snapshot.pages.length): number => snapshot.pages.slice(from, to).reduce((sum, p) => sum + p.bytes, 0);

describe('list_snapshots: what walks over superseded states are charged', () => {
  it('nothing while the pages a walk holds are still the index\'s; each page once it is replaced, until the walk passes it', () => {
    const books = index(4);
    const snapshot = books.snapshot();
    const w = walk(snapshot);
    assert.equal(w.charged(), 0);
    writeEveryPage(books, 1);
    assert.equal(w.charged(), 0, 'until its page is rebuilt, the index holds the same text');
    books.snapshot();
    assert.equal(w.charged(), bytesOf(snapshot));
    w.passed();
    assert.equal(w.charged(), bytesOf(snapshot, 1));
    w.close();
    assert.equal(w.charged(), 0);
  });

  it('a page deleted whole is superseded too; one no walk holds costs nothing', () => {
    const books = new BookIndex();
    for (let id = 1; id <= 3 * PAGE; id++) books.set(id, bookJson({ id, title: 'x', author: 'A', year: 2000 }));
    const snapshot = books.snapshot();
    const w = walk(snapshot);
    for (let id = PAGE; id < 2 * PAGE; id++) books.delete(id);
    assert.equal(w.charged(), (snapshot.pages[1]?.bytes ?? 0));
    w.close();
    replaceEveryPage(books, 1);
    assert.equal(w.charged(), 0);
  });

  it('a page two walks hold is charged once, to the one that would hold it longest, then to the other when that one lets it go', () => {
    const books = index(3);
    const snapshot = books.snapshot();
    const fast = walk(snapshot, 10_000_000);
    const slow = walk(snapshot, 10);
    replaceEveryPage(books, 1);
    assert.equal(fast.charged() + slow.charged(), bytesOf(snapshot), 'counted once');
    assert.equal(slow.charged(), bytesOf(snapshot), 'the slow one pays');
    slow.close();
    assert.equal(fast.charged(), bytesOf(snapshot), 'its share moves on');
    fast.passed();
    assert.equal(fast.charged(), bytesOf(snapshot, 1));
  });

  it('a walk that has passed a page is not charged for it; one that starts on a state already superseded is', () => {
    const books = index(3);
    const snapshot = books.snapshot();
    const ahead = walk(snapshot, 10);
    ahead.passed();
    ahead.passed();
    const late = walk(snapshot, 1_000_000);
    replaceEveryPage(books, 1);
    assert.equal(ahead.charged(), bytesOf(snapshot, 2), 'only its last page');
    assert.equal(late.charged(), bytesOf(snapshot, 0, 2), 'the pages only it holds');
    const later = walk(snapshot, 0);
    assert.equal(ahead.charged() + late.charged() + later.charged(), bytesOf(snapshot), 'a walk joining adds nothing to the total');
    ahead.close();
    late.close();
    assert.equal(later.charged(), bytesOf(snapshot));
  });

  it('a walk that starts on a state replaced before it began (no walk held it then) is charged for all of it at once', () => {
    const books = index(3);
    const snapshot = books.snapshot();
    replaceEveryPage(books, 1);
    const late = walk(snapshot, 10);
    assert.equal(late.charged(), bytesOf(snapshot), 'reported on opening, before any page passes');
    late.passed();
    assert.equal(late.charged(), bytesOf(snapshot, 1));
    late.close();
    assert.equal(late.charged(), 0);
  });

  it('over the budget, the walk holding most per byte per second it moves is shed first, and what it freed is seen before the next pick', () => {
    const books = index(4);
    const states = [books.snapshot(), replaceEveryPage(books, 1), replaceEveryPage(books, 2)];
    const [one, two, three] = states as [ListSnapshot, ListSnapshot, ListSnapshot];
    // Room for two states' superseded pages, not three.
    const budget = new MemoryBudget(bytesOf(one) + bytesOf(two) + 1000);
    const cut: string[] = [];
    const moved: Record<string, number> = { slow: 10, fast: 1_000_000, faster: 100_000_000 };
    const walks = [
      chargedWalk(budget, one, () => moved.slow as number, () => cut.push('slow')),
      chargedWalk(budget, two, () => moved.fast as number, () => cut.push('fast')),
      chargedWalk(budget, three, () => moved.faster as number, () => cut.push('faster')),
    ];
    assert.equal(budget.heldBy('list_snapshots'), bytesOf(one) + bytesOf(two));
    replaceEveryPage(books, 3);
    assert.deepEqual(cut, ['slow']);
    assert.equal(budget.heldBy('list_snapshots'), bytesOf(two) + bytesOf(three));
    assert.ok(budget.held <= budget.limit);
    for (const w of walks) w.close();
    assert.equal(budget.held, 0);
  });

  it('a search scanning a state that writes supersede is charged for what it has still to scan; shed, it stops and lets go', async () => {
    const books = index(60);
    const snapshot = books.snapshot();
    const roomy = new MemoryBudget(2 * bytesOf(snapshot));
    const scanning = search(snapshot, { q: 'no such title', after: 0, limit: 10, abandoned: () => false, budget: roomy });
    replaceEveryPage(books, 1);
    assert.ok(roomy.heldBy('list_snapshots') > bytesOf(snapshot) / 2, `charged ${roomy.heldBy('list_snapshots')} bytes`);
    assert.equal((await scanning)?.total, 0);
    assert.equal(roomy.held, 0, 'released once done');

    const next = books.snapshot();
    const tight = new MemoryBudget(bytesOf(next) / 4);
    const shed = search(next, { q: 'no such title', after: 0, limit: 10, abandoned: () => false, budget: tight });
    replaceEveryPage(books, 2);
    assert.equal(tight.shedCount('list_snapshots'), 1);
    assert.equal(tight.held, 0);
    assert.equal(await shed, undefined);
  });

  it('a walk that has closed keeps none of its pages, though the queue of a page another walk still holds names it', async () => {
    const books = index(3);
    const slow = walk(books.snapshot(), 1);
    const change = (id: number, title: string): void => books.set(id, bookJson({ id, title, author: 'A', year: 2000 }));
    change(1, 'b');
    change(PAGE + 1, 'b');
    let later: ListSnapshot | undefined = books.snapshot();
    let fast: ReturnType<typeof walk> | undefined = walk(later, 1_000_000_000);
    // The last page, the same text in both snapshots, superseded while both hold it: the slow one pays.
    change(2 * PAGE + 1, 'b');
    books.snapshot();
    for (let p = 0; p < 3; p++) fast.passed();
    fast.close();
    const page = new WeakRef(later.pages[0] as object);
    fast = undefined;
    later = undefined;
    change(1, 'c');
    books.snapshot();
    await turn();
    gc();
    assert.equal(page.deref(), undefined, 'a superseded page of the closed walk\'s state is still in memory');
    assert.equal(slow.charged() > 0, true);
    slow.close();
  });
});
