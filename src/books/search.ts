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
  const escaped = JSON.stringify(options.q).slice(1, -1);
  const scan = new RegExp(regexLiteral(escaped), 'giu');
  const decoded = new RegExp(regexLiteral(options.q), 'iu');
  const books: string[] = [];
  let more = false;
  let total = 0;
  let scanned = 0;
  let shed = false;
  const moved = (): number => scanned;
  const walk: PageWalk =
    options.budget === undefined
      ? snapshot.walk({ moved, set: () => {} })
      : chargedWalk(options.budget, snapshot, moved, () => {
          shed = true;
        });
  const slice = YieldBudget.timed(SLICE_MS);
  /** Yields the event loop once this turn has used its slice; false when the client went away, or at once when the budget shed the scan. */
  const goOn = async (): Promise<boolean> => {
    if (shed) return false;
    if (!slice.spent) return true;
    await slice.nextTurn();
    return !shed && !options.abandoned();
  };
  // The regular expression passes over text without hits at hundreds of MB/s; the time goes into
  // hits, so the clock is read at each page and every HITS_PER_CHECK hits.
  let hits = 0;
  try {
    for (const { text, bytes } of snapshot.pages) {
      if (!(await goOn())) return undefined;
      scan.lastIndex = 0;
      for (let hit = scan.exec(text); hit !== null; hit = scan.exec(text)) {
        // Text is never changed and `scan` is this search's own, so the loop resumes where it was.
        if (++hits % HITS_PER_CHECK === 0 && !(await goOn())) return undefined;
        const at = hit.index;
        const end = at + hit[0].length;
        const start = text.lastIndexOf(BOOK_START, at);
        const title = text.indexOf(TITLE_KEY, start) + TITLE_KEY.length;
        const titleEnd = text.indexOf(AUTHOR_KEY, title);
        const author = titleEnd + AUTHOR_KEY.length;
        const authorEnd = text.indexOf(YEAR_KEY, author);
        const bookEnd = text.indexOf('}', authorEnd) + 1;
        // A hit in the keys before a field: look again from the field's start.
        if (end <= title) {
          scan.lastIndex = title;
          continue;
        }
        if (at >= titleEnd && end <= author) {
          scan.lastIndex = author;
          continue;
        }
        scan.lastIndex = bookEnd;
        const matched =
          at >= authorEnd
            ? false
            : (end <= titleEnd && !hasEscape(text, title, titleEnd)) ||
              (at >= author && end <= authorEnd && !hasEscape(text, author, authorEnd)) ||
              fieldMatches(text, title, titleEnd, decoded) ||
              fieldMatches(text, author, authorEnd, decoded);
        if (!matched) continue;
        total++;
        if (idAt(text, start + BOOK_START.length) <= options.after) continue;
        if (books.length < options.limit) books.push(text.slice(start, bookEnd));
        else more = true;
      }
      scanned += bytes;
      walk.passed();
    }
  } finally {
    walk.close();
  }
  return { books, more, total };
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
