import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { createLogger, Registry, type DurableBookStore, type Logger } from '../src/index.ts';
import { NO_STORE_OBSERVER, type StoreObserver } from '../src/store/observer.ts';
import { needsPostgres, sql, startCluster, storePackage, type Cluster } from './helpers/postgres.ts';
import { feedRelay, serverEndingEachSession, type FeedRelay } from './helpers/postgres-network.ts';
import { until, within } from './helpers/wait.ts';

const book = { title: 'T', author: 'A', year: 2000 };

/** How many sessions on `url`'s database (not another test's), other than the asking one, match `where`. */
const activity = (url: string, where: string): Promise<string> => sql(url, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${where}`);
/** The store's read of the feed, waiting for a lock. */
const FEED_READ_WAITING = "wait_event_type = 'Lock' AND query LIKE 'SELECT seq, type, id, book FROM book_changes%'";

/**
 * What another process committed (`changes`, up to `seq`), read by the store (whose metrics are in
 * `registry`, and which made one commit of its own) only once `release`d. The store's reads of the
 * feed so far must be done first: the one at its start and the one its own commit's notification
 * makes (either would read this change too early). Then a second session holds the feed's table
 * before the notification goes out, so the store's read of the change waits.
 */
async function commitBehindHeldFeed(url: string, registry: Registry, changes: string, seq: number): Promise<{ release(): Promise<void> }> {
  await until("the store's reads of the feed at its start and after its own commit", () => queriesCounted(registry, 'changes') >= 2);
  await sql(url, `BEGIN; ${changes}; UPDATE catalogue SET seq = ${seq}; COMMIT`);
  const holder = sql(url, 'BEGIN; LOCK TABLE book_changes IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60)').catch(() => 'ended');
  await until('another session holding the feed table', async () => (await activity(url, "wait_event = 'PgSleep'")) === '1');
  await sql(url, `SELECT pg_notify('book_catalogue_changes', '${seq}')`);
  await until('the store reading the feed, waiting for the table', async () => (await activity(url, FEED_READ_WAITING)) === '1');
  return {
    async release() {
      assert.equal(await sql(url, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'"), '1');
      assert.equal(await holder, 'ended');
    },
  };
}
/** What a read waits for: a listening store asks the database what it committed. */
const readWaiting = (store: DurableBookStore): Promise<void> => store.caughtUp() ?? assert.fail('a listening store waits for what the database committed');
/** How many `query` round trips the store's metrics in `registry` have counted (failed ones too). */
const queriesCounted = (registry: Registry, query: 'seq' | 'changes'): number => Number(new RegExp(`^book_catalogue_pg_query_duration_seconds_count\\{query="${query}"\\} (\\d+)$`, 'm').exec(registry.expose())?.[1] ?? 0);
/** `url` (a cluster's database) reached through a relay on 127.0.0.1:`port`. */
const relayed = (url: string, port: number): string => url.replace(/^postgresql:\/\/postgres@\/(\w+)\?.*$/, `postgres://postgres@127.0.0.1:${port}/$1`);

/** Ends every connection the store holds to `url`'s database, as a network cut or a failover does. */
const cutConnections = (url: string): Promise<string> => sql(url, 'SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');

describe('the PostgreSQL store on its own', needsPostgres(), () => {
  let cluster: Cluster;
  const open: DurableBookStore[] = [];
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    for (const store of open) await store.close();
    await cluster?.remove();
  });
  const openStore = async (url: string, options: { registry?: Registry; logger?: Logger; poolSize?: number; observer?: StoreObserver } = {}): Promise<DurableBookStore> => {
    const store = await (await storePackage()).openPostgresStore(url, options);
    open.push(store);
    return store;
  };

  /** A store on a new database, reached through a relay, holding one book, with its metrics: `use` it, then the relay closes. */
  const withRelayedStore = async (use: (store: DurableBookStore, relay: FeedRelay, url: string, registry: Registry) => Promise<void>): Promise<void> => {
    const url = await cluster.createDatabase();
    const relay = await feedRelay(cluster.dir);
    const registry = new Registry();
    try {
      const store = await openStore(relayed(url, relay.port), { registry });
      await store.create(book);
      await use(store, relay, url, registry);
    } finally {
      relay.close();
    }
  };

  it('what logs and messages show of STORE_URL has its password replaced', async () => {
    const { redactedUrl } = await storePackage();
    // [what STORE_URL may be, what logs and messages show, why]
    const cases: [string, string, string][] = [
      ['postgres://catalogue:s3cr%40t@db.internal:5432/books?sslmode=require', 'postgres://catalogue:***@db.internal:5432/books?sslmode=require', 'a password in the user part'],
      ['postgresql://catalogue@/books?host=/run/postgresql', 'postgresql://catalogue@/books?host=/run/postgresql', 'no password'],
      ['postgres://catalogue@db.internal:5432/books', 'postgres://catalogue@db.internal:5432/books', "no password, a port's colon"],
      ['postgres://catalogue:At@Secret99@db.internal/books', 'postgres://catalogue:***@db.internal/books', "node-postgres's URL parser ends the user part at the last @"],
      ['postgres://catalogue:pa/ss@db.internal/books', 'postgres://catalogue:***@db.internal/books', "a raw / fails the parse, and the failed start's message shows the URL"],
      ['postgres://app:pa?ss@db/books', 'postgres://app:***@db/books', 'so does a raw ?'],
      [
        'postgresql://catalogue@/books?host=/run/postgresql&password=QuerySecret123&sslpassword=KeySecret&sslmode=require',
        'postgresql://catalogue@/books?host=/run/postgresql&password=***&sslpassword=***&sslmode=require',
        'node-postgres reads any query parameter as a setting, password and sslpassword included',
      ],
      ['postgres://db.internal/books?PASSWORD=Upper#Tail77', 'postgres://db.internal/books?PASSWORD=***', 'a raw # ends the parameters for the parser, but may be part of the password'],
      ['postgres://db.internal/books?sslmode=require#x', 'postgres://db.internal/books?sslmode=require#x', 'a fragment after other parameters'],
      [
        'postgresql://catalogue@/books?host=/run/postgresql&pass%77ord=EncName111&ssl%70assword=Enc2&pass\tword=Tab&pass\nword=Lf',
        'postgresql://catalogue@/books?host=/run/postgresql&pass%77ord=***&ssl%70assword=***&password=***&password=***',
        'names are percent-decoded, and tabs and newlines dropped, before node-postgres reads them',
      ],
      ['postgres://cata\nlogue:pass\tword@db.internal/books?sslmode=require&application_name=a=b', 'postgres://catalogue:***@db.internal/books?sslmode=require&application_name=a=b', 'tabs and newlines in the user part'],
      ['postgres://app:LongPassword123@db/books?sslmode=verify-full&sslkey=/k&sslpassword=KeyPass', 'postgres://app:***@db/books?sslmode=verify-full&sslkey=/k&sslpassword=***', 'both at once'],
      ['postgres://app@db:5432/books?application_name=a@b&password=Q', 'postgres://app@db:***@b&password=***', "an @ in the query after a port's colon: more is hidden, never less"],
    ];
    for (const [url, shown, why] of cases) assert.equal(redactedUrl(url), shown, why);
  });

  it('metrics: the pool by state, queries waiting, the listening connection and query durations by query', async () => {
    const registry = new Registry();
    const store = await openStore(await cluster.createDatabase(), { registry });
    await store.create(book);
    await store.caughtUp();
    const text = registry.expose();
    for (const line of [
      /^book_catalogue_pg_pool_connections\{state="idle"\} \d+$/m,
      /^book_catalogue_pg_pool_connections\{state="busy"\} \d+$/m,
      /^book_catalogue_pg_pool_waiting 0$/m,
      /^book_catalogue_pg_listening 1$/m,
      /^book_catalogue_pg_query_duration_seconds_count\{query="commit"\} 1$/m,
      /^book_catalogue_pg_query_duration_seconds_count\{query="seq"\} 1$/m,
      /^book_catalogue_pg_query_duration_seconds_bucket\{query="write",le="\+Inf"\} [1-9]\d*$/m,
    ]) {
      assert.match(text, line);
    }
  });

  it('a connection cut is ridden out: the feed connection comes back by itself and what was written meanwhile arrives', async () => {
    const url = await cluster.createDatabase();
    const [a, b] = [await openStore(url), await openStore(url)];
    await a.create(book);
    await cutConnections(url);
    await until('B listening again', () => b.writable);
    // No retry here: a connection the cut left dead in A's pool is the store's to get past.
    const created = await a.create(book);
    await until('B holding the book A wrote after the cut', () => b.getJson(created.id) !== undefined);
    assert.equal(b.feed.seq, a.feed.seq);
  });

  it('a connection lost in the middle of a write transaction: the process stays up, and the write, which had not committed, commits once on another connection', async () => {
    const url = await cluster.createDatabase();
    const store = await openStore(url);
    const terminate = (where: string): Promise<string> => sql(url, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${where}`);
    // Another session holds the catalogue row, so the store's write transaction waits inside it.
    const holder = sql(url, 'BEGIN; SELECT 1 FROM catalogue FOR UPDATE; SELECT pg_sleep(60)').catch(() => 'ended');
    await until('the other session holding the row', async () => (await activity(url, "wait_event = 'PgSleep'")) === '1');
    const created = store.create(book);
    const writerWaits = "application_name = 'book-catalogue' AND wait_event_type = 'Lock'";
    await until('the write transaction waiting for the row', async () => (await activity(url, writerWaits)) === '1');
    assert.equal(await terminate(writerWaits), '1');
    // The write runs again on another connection, which waits for the row in its turn.
    await until('the write waiting again on another connection', async () => (await activity(url, writerWaits)) === '1');
    assert.equal(await terminate("wait_event = 'PgSleep'"), '1');
    assert.equal(await holder, 'ended');
    assert.deepEqual(await created, { id: 1, ...book });
    assert.equal(await sql(url, 'SELECT seq, next_id, (SELECT count(*) FROM books) FROM catalogue'), '1|2|1');
    await store.caughtUp();
    assert.equal(store.feed.seq, 1);
  });

  it('a connection the server ends as the pool hands it over (its FATAL read with the startup answer) fails the open, and the process stays up', async () => {
    const server = await serverEndingEachSession();
    try {
      await assert.rejects(openStore(`postgres://catalogue@127.0.0.1:${(server.address() as AddressInfo).port}/books`), { name: 'ConnectionLostError' });
    } finally {
      server.close();
    }
  });

  it('a database that refuses every write: one log line per interval, naming why, not one per write, and the rolled-back connection kept', async () => {
    const url = await cluster.createDatabase();
    const lines: string[] = [];
    const store = await openStore(url, { logger: createLogger({ level: 'error', write: (line) => lines.push(line) }) });
    await sql(url, 'ALTER TABLE catalogue ADD CONSTRAINT refuse_writes CHECK (seq = 0) NOT VALID');
    // A refused transaction, rolled back, gives its connection back to the pool: the next one reuses it.
    const rolledBack = (): Promise<string> => sql(url, "SELECT string_agg(pid::text, ',') FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'book-catalogue' AND query = 'ROLLBACK'");
    await assert.rejects(store.create(book), /database write failed/);
    const kept = await rolledBack();
    assert.match(kept, /^\d+$/);
    for (let n = 0; n < 2; n++) await assert.rejects(store.create(book), /database write failed/);
    assert.equal(await rolledBack(), kept);
    assert.equal(lines.length, 1, lines.join('\n'));
    const line = JSON.parse(lines[0] as string) as { msg: string; err: { message: string } };
    assert.equal(line.msg, 'a PostgreSQL write transaction failed');
    assert.match(line.err.message, /violates check constraint "refuse_writes"/);
  });

  it('a database that ends every write\'s session before COMMIT: the write runs again on at most the pool\'s connections, is refused, and the retries log one line', async () => {
    const url = await cluster.createDatabase();
    const lines: string[] = [];
    const store = await openStore(url, { poolSize: 3, logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }) });
    // A sequence counts the attempts: it is not rolled back with them.
    await sql(url, `CREATE SEQUENCE attempts;
      CREATE FUNCTION end_session() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM nextval('attempts'); PERFORM pg_terminate_backend(pg_backend_pid()); RETURN NEW; END $$;
      CREATE TRIGGER end_session BEFORE UPDATE ON catalogue FOR EACH ROW EXECUTE FUNCTION end_session()`);
    await assert.rejects(store.create(book), /database write failed/);
    assert.equal(await sql(url, 'SELECT seq FROM catalogue'), '0');
    assert.equal(await sql(url, 'SELECT last_value FROM attempts'), '4', 'the first attempt and one on each of the pool\'s 3 connections');
    const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.deepEqual(messages.filter((msg) => msg.includes('running it again')).length, 1, lines.join('\n'));
    assert.ok(messages.includes('a PostgreSQL write transaction failed'), lines.join('\n'));
  });

  it('a feed that cannot be read logs one line per interval, however often it is tried again', async () => {
    const url = await cluster.createDatabase();
    const lines: string[] = [];
    const registry = new Registry();
    const store = await openStore(url, { registry, logger: createLogger({ level: 'warn', write: (line) => lines.push(line) }) });
    const before = queriesCounted(registry, 'changes');
    await sql(url, "ALTER TABLE book_changes RENAME TO book_changes_away; SELECT pg_notify('book_catalogue_changes', '1')");
    // Tried again after 0.1, 0.2 and 0.4 s.
    await until('the feed read and tried again twice', () => queriesCounted(registry, 'changes') >= before + 3);
    await sql(url, 'ALTER TABLE book_changes_away RENAME TO book_changes');
    assert.equal(lines.filter((line) => line.includes('reading the change feed from the database failed')).length, 1, lines.join('\n'));
    assert.equal(store.writable, true);
  });

  it('a server-wide idle_session_timeout does not end the feed\'s connection between commits', async () => {
    const url = await cluster.createDatabase();
    await sql(url, `ALTER DATABASE ${/\/(\w+)\?/.exec(url)?.[1]} SET idle_session_timeout = '200ms'`);
    const lines: string[] = [];
    const store = await openStore(url, { logger: createLogger({ level: 'error', write: (line) => lines.push(line) }) });
    await delay(1000);
    assert.deepEqual(lines, []);
    assert.equal(store.writable, true);
    assert.deepEqual(await store.create(book), { id: 1, ...book });
  });

  it('an observer that throws when told of a commit does not turn the committed write into a failed one', async () => {
    const url = await cluster.createDatabase();
    const observer: StoreObserver = {
      ...NO_STORE_OBSERVER,
      committed: () => {
        throw new Error('metrics sink down');
      },
    };
    const store = await openStore(url, { observer });
    assert.deepEqual(await store.create(book), { id: 1, ...book });
    assert.equal(await sql(url, 'SELECT seq FROM catalogue'), '1');
  });

  it('a logger that throws while a failed write is reported: the write is refused, nothing is left unhandled, and the next write commits', async () => {
    const url = await cluster.createDatabase();
    const logger = createLogger({
      level: 'error',
      write: () => {
        throw new Error('log sink down');
      },
    });
    const store = await openStore(url, { logger });
    await sql(url, 'ALTER TABLE catalogue ADD CONSTRAINT refuse_writes CHECK (seq = 0) NOT VALID');
    await assert.rejects(within('the refused write', store.create(book)), /database write failed/);
    await sql(url, 'ALTER TABLE catalogue DROP CONSTRAINT refuse_writes');
    assert.deepEqual(await store.create(book), { id: 1, ...book });
  });

  it('a read of the feed that fails while the listening connection stays up (a cancelled query) is tried again: what waits for those changes is answered', async () => {
    const url = await cluster.createDatabase();
    const registry = new Registry();
    const store = await openStore(url, { registry });
    await store.create(book);
    // Another process commits seq 2; this store's read of it waits until an operator cancels it.
    const held = await commitBehindHeldFeed(
      url,
      registry,
      `UPDATE books SET json = '{"id":1,"title":"T","author":"A","year":2001}' WHERE id = 1; INSERT INTO book_changes VALUES (2, 'updated', 1, '{"id":1,"title":"T","author":"A","year":2001}')`,
      2,
    );
    const reading = readWaiting(store);
    assert.equal(await sql(url, `SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND ${FEED_READ_WAITING}`), '1');
    await held.release();
    await within('the read waiting for seq 2', reading);
    assert.equal(store.getJson(1), '{"id":1,"title":"T","author":"A","year":2001}');
  });

  it('what waits for the feed when its connection drops is answered from memory, not held for the whole outage', async () => {
    await withRelayedStore(async (store, relay, url, registry) => {
      // Seq 2 is committed, but the store's read of it waits behind another session's lock.
      const held = await commitBehindHeldFeed(url, registry, "INSERT INTO book_changes VALUES (2, 'deleted', 1, NULL); DELETE FROM books", 2);
      const seqReads = queriesCounted(registry, 'seq');
      const reading = readWaiting(store);
      // The read has the database's seq (2) and waits for memory to reach it when the connection drops.
      await until('the read asking the database its seq', () => queriesCounted(registry, 'seq') > seqReads);
      relay.cutFeed({ holdCheck: true });
      await within('the read waiting when the connection dropped', reading);
      assert.equal(store.getJson(1), '{"id":1,"title":"T","author":"A","year":2000}');
      await held.release();
    });
  });

  it('a database that stops answering without closing its connections: reads answer from memory after a bound and /readyz says so, until it answers again', async () => {
    await withRelayedStore(async (store, relay) => {
      relay.freeze();
      // Answered once the read's 3 s timeout has passed.
      await within('a read while the database does not answer', readWaiting(store));
      assert.equal(store.writable, false, 'not ready while the database does not answer');
      assert.equal(store.caughtUp(), undefined, 'the next read answers from memory at once');
      relay.thaw();
      await until('ready again once the database answers (asked again by itself)', () => store.writable);
      assert.deepEqual(await store.create(book), { id: 2, ...book });
    });
  });

  it('a reconnect is not mistaken for lost commits when this process commits while the new connection checks the database', async () => {
    await withRelayedStore(async (store, relay) => {
      relay.cutFeed({ holdCheck: true });
      await until('the new feed connection asking the database its seq', () => relay.holding);
      // Committed and in memory while that answer is on its way.
      assert.equal((await store.create(book)).id, 2);
      relay.release();
      await until('the store writable again', () => store.writable);
      assert.equal((await store.create(book)).id, 3);
    });
  });

  it('a process that fell too far behind the feed stops writes and readiness, and its reads answer from memory instead of waiting for what it will never read', async () => {
    const url = await cluster.createDatabase();
    const errors: string[] = [];
    const registry = new Registry();
    const store = await openStore(url, { registry, logger: createLogger({ level: 'error', write: (line) => errors.push(line) }) });
    await store.create(book);
    // Other processes committed seqs 2 and 3, and the table was trimmed past 2; this store's read waits behind a lock.
    const held = await commitBehindHeldFeed(url, registry, "INSERT INTO book_changes VALUES (3, 'deleted', 1, NULL); DELETE FROM books", 3);
    const seqReads = queriesCounted(registry, 'seq');
    const waiting = readWaiting(store);
    await until('the read asking the database its seq', () => queriesCounted(registry, 'seq') > seqReads);
    await held.release();
    await within('the read waiting when the gap was found', waiting);
    assert.equal(store.writable, false);
    await within('a read after it', store.caughtUp() ?? Promise.resolve());
    const reads = queriesCounted(registry, 'changes');
    await sql(url, "SELECT pg_notify('book_catalogue_changes', '3')");
    await until('the store reading the feed again', () => queriesCounted(registry, 'changes') > reads);
    assert.equal(errors.filter((line) => line.includes('no longer in book_changes')).length, 1, errors.join('\n'));
  });

  it('a database behind what the process served (a failover to a lagging replica) stops writes and readiness until a restart', async () => {
    const url = await cluster.createDatabase();
    const errors: string[] = [];
    const store = await openStore(url, { logger: createLogger({ level: 'error', write: (line) => errors.push(line) }) });
    for (let n = 0; n < 3; n++) await store.create(book);
    // What a replica that missed the last commit holds.
    await sql(url, "DELETE FROM book_changes WHERE seq = 3; DELETE FROM books WHERE id = 3; UPDATE catalogue SET seq = 2, next_id = 3");
    await cutConnections(url);
    await until('the store logging that the database is behind it', () => errors.some((line) => line.includes('the database is at seq 2, behind the seq 3 this process has served')));
    assert.equal(store.writable, false);
    await assert.rejects(store.create(book), /read-only until restart/);
  });
});

