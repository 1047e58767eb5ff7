import type { Segment } from '../compression/gzip-member.ts';
import type { PageText } from './book-index.ts';

/**
 * A page text's gzip form, one gzip-member segment per slice, kept beside it and filled in a slice
 * at a time by the lists sent gzip-encoded (books/compressed-list-body.ts), so each slice of a page
 * version is compressed once.
 */
export interface DeflatedText {
  /** One per slice of the text, in order; undefined: not compressed yet. */
  readonly slices: (Segment | undefined)[];
  /** Slices not compressed yet. */
  missing: number;
  /** Compressed bytes of the slices so far. */
  bytes: number;
}

/** What a walk reports to the memory budget (a `list_snapshots` charge). */
export interface WalkAccount {
  /** The bytes it is charged for now: the charge's `set`. */
  set(bytes: number): void;
  /** Bytes it has moved (sent, scanned) since it started: with the time since, how fast it goes. */
  moved(): number;
}

/** One pass over a snapshot's pages in order: a streamed GET /books, or a search. */
export interface PageWalk {
  /** Bytes of superseded pages charged to it now. */
  readonly charged: number;
  /** The next page is done with: the walk no longer holds it. */
  passed(): void;
  /** Done or cut: every page still ahead is let go, and it is charged for nothing. Idempotent. */
  close(): void;
}

/**
 * A page's list text, with what the memory budget needs to know about it: how many walks still
 * have it ahead of them and, once the index no longer holds it (superseded) while some still do,
 * which of them it is charged to.
 */
export class ListText implements PageText {
  readonly text: string;
  readonly bytes: number;
  /** The page's key (`id / PAGE`): where it sits in a snapshot, which is in ascending key order. */
  readonly key: number;
  /** Walks that have not passed it yet. */
  holders = 0;
  /** The index no longer holds it (its page repacked or went): only the walks holding it keep it in memory. */
  superseded = false;
  /**
   * Its gzip form so far. Filled in only while it is not superseded, so that what a supersede
   * counts (`pinned`) is all it will ever hold; a list that compresses a superseded text keeps
   * what it makes to itself, one slice at a time.
   */
  deflated: DeflatedText | undefined = undefined;
  /** Bytes it is counted for once superseded: its own and its gzip form's. */
  pinned = 0;
  /**
   * While superseded and held: its holders, the one charged for it at the end, before it the
   * others in reverse order of their turn (those that have passed it by then are skipped).
   */
  queue: Walk[] | undefined = undefined;

  constructor(text: string, bytes: number, key: number) {
    this.text = text;
    this.bytes = bytes;
    this.key = key;
  }
}

class Walk implements PageWalk {
  readonly #readers: ListReaders;
  /** Its snapshot's pages; none once closed (a queue may still name it, and must not keep them). */
  pages: readonly ListText[];
  /** The snapshot's bytes per page on average: how far a page lies ahead, in bytes. */
  readonly pageBytes: number;
  readonly account: WalkAccount;
  readonly since = performance.now();
  /** Pages before this one have been passed. */
  position = 0;
  /** Bytes of the superseded pages charged to it. */
  charged = 0;
  closed = false;

  constructor(readers: ListReaders, pages: readonly ListText[], bytes: number, account: WalkAccount) {
    this.#readers = readers;
    this.pages = pages;
    this.pageBytes = bytes / Math.max(pages.length, 1);
    this.account = account;
  }

  passed(): void {
    const text = this.pages[this.position];
    if (this.closed || text === undefined) return;
    this.position++;
    this.#readers.letGo(text, this, true);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Charged for nothing before its pages move on: the total may dip while they do, never
    // count one twice (that could cut a client for memory nobody holds).
    this.account.set(0);
    this.#readers.closed(this);
    for (let p = this.position; p < this.pages.length; p++) this.#readers.letGo(this.pages[p] as ListText, this, false);
    this.pages = [];
    this.position = 0;
  }

  /** Where `text` lies in this walk's snapshot when the walk still holds it, else -1. */
  ahead(text: ListText): number {
    if (this.closed) return -1;
    const { pages } = this;
    let lo = this.position;
    let hi = pages.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const page = pages[mid] as ListText;
      if (page.key === text.key) return page === text ? mid : -1;
      if (page.key < text.key) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /**
   * How long it would hold the page at `at` at the rate it has moved bytes so far (at least one
   * byte per second, as the budget counts it): the holder that would keep a page longest pays for it.
   */
  holdingSeconds(at: number, now: number): number {
    const rate = Math.max(this.account.moved() / (Math.max(now - this.since, 1) / 1000), 1);
    return ((at + 1 - this.position) * this.pageBytes) / rate;
  }
}

/**
 * The walks over one index's snapshots, and what they pin. A page's list text is the index's own
 * packed string until the page repacks after a change (the next list rebuilds it) or goes whole:
 * from then on it is memory only its holders keep, so it is counted (`list_snapshots`), with its
 * gzip form when a compressed list made one (`pinned`), until the last walk holding it passes it
 * or closes. A walk holds only what lies ahead of it.
 *
 * Each superseded page is counted once, charged to exactly one of its holders: the one that would
 * hold it longest at the rate it has moved so far (the slowest, or the furthest behind); when that
 * one passes it or is cut, to the next. So the charges add up to the memory pinned, the charge of
 * a page sits with the holder whose departure frees it (its last), and the budget, which cuts the
 * account with the most bytes per byte per second moved, meets a page on its slowest holder first.
 * A fair share (bytes / holders) would have to be recomputed for every holder at each pass;
 * charging each holder in full would count a page shared by 60 readers 60 times.
 *
 * Costs: a write costs nothing here. A repack that supersedes a text no walk holds costs one test;
 * one held costs a pass over the open walks (a binary search each) and a sort of its holders, once
 * per page text, on top of the repack itself. A walk costs O(pages) to open and to close, and
 * O(1) per page passed; moving a charge takes the next holder from the queue (each leaves it at
 * most once, after a binary search). The queues hold one reference per holder of a page that is
 * both superseded and held, a small fraction of the bytes counted for that page.
 */
export class ListReaders {
  readonly #walks = new Set<Walk>();

  open(pages: readonly ListText[], bytes: number, account: WalkAccount): PageWalk {
    const walk = new Walk(this, pages, bytes, account);
    this.#walks.add(walk);
    for (const text of pages) {
      text.holders++;
      // A write may commit between a snapshot and the walk that streams it.
      if (text.superseded) this.#join(text, walk);
    }
    if (walk.charged > 0) account.set(walk.charged);
    return walk;
  }

  /** The index no longer holds `text`: its page repacked after a change, or went. */
  supersede(text: ListText): void {
    text.superseded = true;
    text.pinned = text.bytes + (text.deflated?.bytes ?? 0);
    if (text.holders === 0) return;
    const now = performance.now();
    const holders: { walk: Walk; seconds: number }[] = [];
    for (const walk of this.#walks) {
      const at = walk.ahead(text);
      if (at !== -1) holders.push({ walk, seconds: walk.holdingSeconds(at, now) });
    }
    holders.sort((a, b) => a.seconds - b.seconds);
    const queue = holders.map((h) => h.walk);
    const payer = queue.at(-1);
    if (payer === undefined) return;
    text.queue = queue;
    payer.charged += text.pinned;
    payer.account.set(payer.charged);
  }

  closed(walk: Walk): void {
    this.#walks.delete(walk);
  }

  /**
   * `walk` has passed `text` or closed: one holder fewer. If it was charged for the text, the
   * charge moves to the next holder in the queue that still holds it, or ends with the last one.
   * State is settled before any charge is reported: a report may cut walks, this one included.
   */
  letGo(text: ListText, walk: Walk, report: boolean): void {
    text.holders--;
    const queue = text.queue;
    if (queue === undefined || queue.at(-1) !== walk) return;
    queue.pop();
    walk.charged -= text.pinned;
    if (report) walk.account.set(walk.charged);
    if (text.holders > 0) {
      for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
        if (next.ahead(text) === -1) continue;
        queue.push(next);
        next.charged += text.pinned;
        next.account.set(next.charged);
        return;
      }
    }
    text.queue = undefined;
  }

  #join(text: ListText, walk: Walk): void {
    const queue = text.queue;
    if (queue === undefined) {
      text.queue = [walk];
      walk.charged += text.pinned;
    } else {
      // Next in turn after the one charged now, which keeps its charge: no pass over the holders.
      queue.splice(queue.length - 1, 0, walk);
    }
  }
}
