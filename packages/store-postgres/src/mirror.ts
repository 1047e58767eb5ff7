import { BookIndex, ChangeLog, ListSnapshots, PAGE, pageOf, RETAINED_CHANGES, type ChangeEntry, type ChangeType, type MemoryBudget } from 'book-catalogue/store-kit';
import type { Pool } from 'pg';
import { withConnection } from './checkout.ts';

/** Books per query while loading: several pages of the index, whose pages hold PAGE ids. */
const LOAD_ROWS = 8 * PAGE;

/** A book_changes row as node-postgres reads it (bigint arrives as text). */
export interface ChangeRow {
  seq: string;
  type: ChangeType;
  id: string;
  book: string | null;
}

export function entryOf(row: ChangeRow): ChangeEntry {
  return { seq: Number(row.seq), type: row.type, id: Number(row.id), bookJson: row.book };
}

/**
 * The catalogue as this process holds it: every book (the file store's index, so lists, pages and
 * search are the file store's own code) and the last changes of the feed. Changes are applied in
 * seq order only, each batch following the last: the process's own writes and everyone else's.
 */
export class Mirror {
  readonly index = new BookIndex();
  readonly lists = new ListSnapshots(this.index);
  readonly feed: ChangeLog;

  private constructor(feed: ChangeLog) {
    this.feed = feed;
  }

  /**
   * Reads one committed state (a REPEATABLE READ transaction: the books, the feed's last changes
   * and the seq all of one snapshot) into memory.
   */
  static load(pool: Pool, onListenerError: (err: unknown) => void, budget: MemoryBudget | undefined): Promise<Mirror> {
    return withConnection(pool, async (client) => {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows } = await client.query<{ seq: string }>('SELECT seq FROM catalogue');
      const seq = Number(rows[0]?.seq ?? 0);
      const changes = await client.query<ChangeRow>('SELECT seq, type, id, book FROM book_changes WHERE seq > $1 ORDER BY seq', [seq - RETAINED_CHANGES]);
      const entries = changes.rows.map(entryOf);
      // The feed holds what the table still has of the last RETAINED_CHANGES; every change is in the database.
      const mirror = new Mirror(new ChangeLog(seq, entries, onListenerError, seq, budget));
      for (let after = 0; ; ) {
        const { rows: books } = await client.query<{ id: string; json: string }>('SELECT id, json FROM books WHERE id > $1 ORDER BY id LIMIT $2', [after, LOAD_ROWS]);
        const full = books.length === LOAD_ROWS;
        // A full answer may end inside a page: that page is read again whole by the next query.
        const lastPage = pageOf(Number(books.at(-1)?.id));
        const whole = full ? books.filter((b) => pageOf(Number(b.id)) < lastPage) : books;
        mirror.#addPages(whole);
        if (!full) break;
        after = lastPage * PAGE - 1;
      }
      await client.query('COMMIT');
      return mirror;
    });
  }

  get seq(): number {
    return this.feed.seq;
  }

  /** Whole pages of books in ascending id order, each added as a snapshot file's lines are. */
  #addPages(rows: readonly { id: string; json: string }[]): void {
    let page: number | undefined;
    let text = '';
    for (const { id, json } of rows) {
      const key = pageOf(Number(id));
      if (key !== page && text !== '') {
        this.index.addPacked(text, Buffer.byteLength(text));
        text = '';
      }
      page = key;
      text += `${json},\n`;
    }
    if (text !== '') this.index.addPacked(text, Buffer.byteLength(text));
  }

  /** A batch whose first seq follows `seq`: into the books, then the feed (whose listeners run now). */
  apply(entries: readonly ChangeEntry[]): void {
    for (const e of entries) {
      if (e.bookJson === null) this.index.delete(e.id);
      else this.index.set(e.id, e.bookJson);
    }
    this.lists.changed();
    this.feed.append(entries);
    // The database holds every change: memory keeps only the last RETAINED_CHANGES.
    this.feed.snapshotTaken(this.feed.seq);
  }
}
