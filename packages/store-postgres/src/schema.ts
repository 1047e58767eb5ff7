import type { Pool } from 'pg';
import { withConnection } from './checkout.ts';

/** The channel a commit notifies: its payload is the commit's last seq. */
export const CHANNEL = 'book_catalogue_changes';

/** The schema's version, kept in `catalogue.format`: a later release's schema is refused, never guessed at. */
export const FORMAT = 1;

/** Any constant names the lock: only the schema's creation takes it. */
const SCHEMA_LOCK = 0x626f6f6b;

/**
 * The tables, in the database (and schema, by its search_path) the URL names:
 * - `catalogue`: one row, the last change's seq and the id the next create gets. Every write
 *   transaction locks it first, so writers commit one at a time and seq order is commit order.
 * - `books`: each book's response JSON (text, not jsonb: the bytes clients get, escapes and key
 *   order included; text cannot hold U+0000, its JSON escape can).
 * - `book_changes`: the change feed, seq → the book after the change (NULL: deleted).
 */
const DDL = `
CREATE TABLE IF NOT EXISTS catalogue (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  seq bigint NOT NULL,
  next_id bigint NOT NULL,
  format integer NOT NULL
);
CREATE TABLE IF NOT EXISTS books (
  id bigint PRIMARY KEY,
  json text NOT NULL
);
CREATE TABLE IF NOT EXISTS book_changes (
  seq bigint PRIMARY KEY,
  type text NOT NULL CHECK (type IN ('created', 'updated', 'deleted')),
  id bigint NOT NULL,
  book text
);
INSERT INTO catalogue (seq, next_id, format) VALUES (0, 1, ${FORMAT}) ON CONFLICT DO NOTHING;
`;

/** Creates the tables when missing; processes starting together take turns. */
export function ensureSchema(pool: Pool): Promise<void> {
  return withConnection(pool, async (client) => {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    await client.query(DDL);
    const { rows } = await client.query<{ format: number }>('SELECT format FROM catalogue');
    const format = rows[0]?.format ?? FORMAT;
    if (format > FORMAT) throw new Error(`the catalogue's tables are in format ${format}, written by a later release; this one reads format ${FORMAT}`);
    await client.query('COMMIT');
  });
}
