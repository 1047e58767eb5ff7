import { RETAINED_CHANGES, type CatalogueDump } from 'book-catalogue/store-kit';
import pg from 'pg';
import { withConnection } from './checkout.ts';
import { entryOf, type ChangeRow } from './mirror.ts';
import { ensureSchema } from './schema.ts';

/** Rows per INSERT while writing a catalogue. */
const WRITE_ROWS = 5000;

async function withClient<T>(url: string, use: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 1, application_name: 'book-catalogue move' });
  pool.on('error', () => {});
  try {
    await ensureSchema(pool);
    return await withConnection(pool, use);
  } finally {
    await pool.end();
  }
}

/** The catalogue with its position, read in one REPEATABLE READ transaction (one committed state). */
export function readDump(url: string): Promise<CatalogueDump> {
  return withClient(url, async (client) => {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const { rows } = await client.query<{ seq: string; next_id: string }>('SELECT seq, next_id FROM catalogue');
    const seq = Number(rows[0]?.seq ?? 0);
    const changes = await client.query<ChangeRow>('SELECT seq, type, id, book FROM book_changes WHERE seq > $1 ORDER BY seq', [seq - RETAINED_CHANGES]);
    const books = await client.query<{ json: string }>('SELECT json FROM books ORDER BY id');
    await client.query('COMMIT');
    return { books: books.rows.map((r) => r.json), nextId: Number(rows[0]?.next_id ?? 1), seq, changes: changes.rows.map(entryOf) };
  });
}

/** Writes a catalogue into a database whose catalogue is empty (never written); refuses one that is not. */
export function writeDump(url: string, dump: CatalogueDump): Promise<void> {
  return withClient(url, async (client) => {
    await client.query('BEGIN');
    const { rows } = await client.query<{ seq: string; books: boolean }>('SELECT seq, EXISTS (SELECT 1 FROM books) AS books FROM catalogue FOR UPDATE');
    if (Number(rows[0]?.seq) !== 0 || rows[0]?.books === true) throw new Error('the database already holds a catalogue; move into an empty one');
    for (let from = 0; from < dump.books.length; from += WRITE_ROWS) {
      const json = dump.books.slice(from, from + WRITE_ROWS);
      const ids = json.map((j) => Number(/^\{"id":(\d+)/.exec(j)?.[1]));
      await client.query('INSERT INTO books (id, json) SELECT * FROM unnest($1::bigint[], $2::text[])', [ids, json]);
    }
    for (let from = 0; from < dump.changes.length; from += WRITE_ROWS) {
      const part = dump.changes.slice(from, from + WRITE_ROWS);
      await client.query('INSERT INTO book_changes (seq, type, id, book) SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[])', [
        part.map((c) => c.seq),
        part.map((c) => c.type),
        part.map((c) => c.id),
        part.map((c) => c.bookJson),
      ]);
    }
    const lastId = Number(/^\{"id":(\d+)/.exec(dump.books.at(-1) ?? '')?.[1] ?? 0);
    await client.query('UPDATE catalogue SET seq = $1, next_id = $2', [dump.seq, Math.max(dump.nextId, lastId + 1)]);
    await client.query('COMMIT');
  });
}
