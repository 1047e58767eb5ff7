import { YieldBudget } from '../loop/yield-budget.ts';
import type { MemoryBudget } from '../memory/budget.ts';
import { BOOK_KEYS } from '../model/book.ts';
import { idAt, type ListSnapshot } from '../store/book-index.ts';
import type { PageWalk } from '../store/list-readers.ts';
import { chargedWalk } from './charged-walk.ts';

/** What a search found: one page of matches and how many books match in all. */
export interface SearchResult {
  /** Matching books (JSON) with ids above `after`, ascending, at most `limit`. */
  readonly books: string[];
  /** Whether more matches follow the last one returned. */
  readonly more: boolean;
  readonly total: number;
}

export interface SearchOptions {
  readonly q: string;
  readonly after: number;
  readonly limit: number;
  /** Checked between slices of the scan: true stops it (the client went away). */
  readonly abandoned: () => boolean;
  /**
   * What the scan is charged to while it holds its snapshot over event-loop turns (`list_snapshots`):
   * it scans hundreds of MB/s, so it ranks below any stream, yet many searches slowed by each other
   * would otherwise pin superseded states uncounted. Shed, it stops as if abandoned. Absent: not counted.
   */
  readonly budget?: MemoryBudget;
}

/** Milliseconds of scanning per event-loop turn, so a search never holds other requests for long (`npm run bench:scale`: the longest /healthz wait during searches at 1M books was 11–16 ms). */
const SLICE_MS = 5;
/** Hits between clock reads: a slice overruns SLICE_MS by a small fraction of it (a hit costs ~1 µs to collect, so ~0.1 ms at most). */
const HITS_PER_CHECK = 128;

// Every book's text is bookJson's: `{"id":N,"title":"…","author":"…","year":N}`. What lies
// between a string field's quotes is the field; these separators never occur within one.
const BOOK_START = BOOK_KEYS.id;
const TITLE_KEY = `${BOOK_KEYS.title}"`;
const AUTHOR_KEY = `"${BOOK_KEYS.author}"`;
const YEAR_KEY = `"${BOOK_KEYS.year}`;

/**
 * Scans one committed state for books whose title or author contains `q`, compared under Unicode
 * simple case folding (the `i` and `u` flags of a regular expression). The scan runs over the
 * page texts as they are, a turn at a time: a regular expression finds candidates in the JSON,
 * and a book matches when a hit lies wholly inside its title or author. The JSON escaping of a
 * character is fixed and no escaped character (`"`, `\`, controls) has another case, so a hit of
 * the escaped `q` inside a field without escapes is exactly a match; a field holding escapes is
 * decided on its decoded text.
 */
export async function search(snapshot: ListSnapshot, options: SearchOptions): Promise<SearchResult | undefined> {
  const found: Found = { books: [], more: false, total: 0, after: options.after, limit: options.limit };
  const scan = new ScanInTurns(snapshot, options);
  const patterns = searchPatterns(options.q);
  try {
    for (const { text, bytes } of snapshot.pages) {
      if (!(await scan.goOn())) return undefined;
      if (!(await searchPage(text, patterns, found, scan))) return undefined;
      scan.passed(bytes);
    }
  } finally {
    scan.close();
  }
  return { books: found.books, more: found.more, total: found.total };
}

/** The matches so far, and the page of them a search answers. */
interface Found {
  readonly books: string[];
  more: boolean;
  total: number;
  readonly after: number;
  readonly limit: number;
}

/** `q` escaped as JSON escapes it, to find hits in the page texts; and as given, to decide a field holding escapes on its decoded text. */
interface SearchPatterns {
  readonly scan: RegExp;
  readonly decoded: RegExp;
}

function searchPatterns(q: string): SearchPatterns {
  const escaped = JSON.stringify(q).slice(1, -1);
  return { scan: new RegExp(regexLiteral(escaped), 'giu'), decoded: new RegExp(regexLiteral(q), 'iu') };
}

/**
 * A scan of one snapshot's pages over event-loop turns: it yields the loop once a turn has used
 * its slice, and stops when the client went away or the memory budget shed it.
 */
class ScanInTurns {
  readonly #walk: PageWalk;
  readonly #abandoned: () => boolean;
  readonly #slice = YieldBudget.timed(SLICE_MS);
  #scanned = 0;
  #shed = false;
  /** Hits collected: the clock is read every HITS_PER_CHECK of them. */
  #hits = 0;

  constructor(snapshot: ListSnapshot, { budget, abandoned }: SearchOptions) {
    const moved = (): number => this.#scanned;
    this.#walk =
      budget === undefined
        ? snapshot.walk({ moved, set: () => {} })
        : chargedWalk(budget, snapshot, moved, () => {
            this.#shed = true;
          });
    this.#abandoned = abandoned;
  }

  /** Yields the event loop once this turn has used its slice; false when the client went away, or at once when the budget shed the scan. */
  async goOn(): Promise<boolean> {
    if (this.#shed) return false;
    if (!this.#slice.spent) return true;
    await this.#slice.nextTurn();
    return !this.#shed && !this.#abandoned();
  }

  /**
   * Counts a hit; true when the clock is due. The regular expression passes over text without hits
   * at hundreds of MB/s; the time goes into hits, so the clock is read at each page and every
   * HITS_PER_CHECK hits.
   */
  hitDue(): boolean {
    return ++this.#hits % HITS_PER_CHECK === 0;
  }

  /** The next page is scanned (`bytes` of it): the walk no longer holds it. */
  passed(bytes: number): void {
    this.#scanned += bytes;
    this.#walk.passed();
  }

  close(): void {
    this.#walk.close();
  }
}

/** Adds the matching books of one page text to `found`; false when the scan must stop. */
async function searchPage(text: string, { scan, decoded }: SearchPatterns, found: Found, turns: ScanInTurns): Promise<boolean> {
  scan.lastIndex = 0;
  for (let hit = scan.exec(text); hit !== null; hit = scan.exec(text)) {
    // Text is never changed and `scan` is this search's own, so the loop resumes where it was.
    if (turns.hitDue() && !(await turns.goOn())) return false;
    const at = hit.index;
    const end = at + hit[0].length;
    const book = bookAround(text, at);
    // A hit in the keys before a field: look again from the field's start.
    if (end <= book.title) {
      scan.lastIndex = book.title;
      continue;
    }
    if (at >= book.titleEnd && end <= book.author) {
      scan.lastIndex = book.author;
      continue;
    }
    scan.lastIndex = book.end;
    if (hitMatches(text, book, at, end, decoded)) add(found, text, book);
  }
  return true;
}

/** Where the book around a hit and its string fields start and end in the page text. */
interface BookSpan {
  readonly start: number;
  readonly title: number;
  readonly titleEnd: number;
  readonly author: number;
  readonly authorEnd: number;
  readonly end: number;
}

function bookAround(text: string, at: number): BookSpan {
  const start = text.lastIndexOf(BOOK_START, at);
  const title = text.indexOf(TITLE_KEY, start) + TITLE_KEY.length;
  const titleEnd = text.indexOf(AUTHOR_KEY, title);
  const author = titleEnd + AUTHOR_KEY.length;
  const authorEnd = text.indexOf(YEAR_KEY, author);
  return { start, title, titleEnd, author, authorEnd, end: text.indexOf('}', authorEnd) + 1 };
}

/** Whether a hit past the keys before the title makes its book a match: wholly inside a field without escapes, or a field's decoded text matches. */
function hitMatches(text: string, book: BookSpan, at: number, end: number, decoded: RegExp): boolean {
  if (at >= book.authorEnd) return false;
  return (
    (end <= book.titleEnd && !hasEscape(text, book.title, book.titleEnd)) ||
    (at >= book.author && end <= book.authorEnd && !hasEscape(text, book.author, book.authorEnd)) ||
    fieldMatches(text, book.title, book.titleEnd, decoded) ||
    fieldMatches(text, book.author, book.authorEnd, decoded)
  );
}

/** Counts a match, and keeps it when its id is past `after` and the page has room. */
function add(found: Found, text: string, book: BookSpan): void {
  found.total++;
  if (idAt(text, book.start + BOOK_START.length) <= found.after) return;
  if (found.books.length < found.limit) found.books.push(text.slice(book.start, book.end));
  else found.more = true;
}

/** A field decided on its decoded text: it holds escapes, or the hit was not wholly inside it. */
function fieldMatches(text: string, from: number, to: number, decoded: RegExp): boolean {
  return decoded.test(hasEscape(text, from, to) ? (JSON.parse(`"${text.slice(from, to)}"`) as string) : text.slice(from, to));
}

function hasEscape(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 92 /* \ */) return true;
  return false;
}

/** `text` as a pattern matching itself: with the `u` flag only syntax characters may be escaped. */
function regexLiteral(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}
