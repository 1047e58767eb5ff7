import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { needsPostgres, startCluster, type Cluster } from './helpers/postgres.ts';
import { killAll, runMain, startMain, type RunningService } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const SECRET = 'move-test-secret-that-is-at-least-32-bytes';
const ENV = { SECRET_TOKEN: SECRET, AUTH_PASSWORD: 'pw', LOG_LEVEL: 'info' };
const token = (): string => signToken('admin', Buffer.from(SECRET), Date.now() / 1000);

async function call(service: RunningService, method: string, path: string, body?: unknown): Promise<{ status: number; text: string; etag: string | null }> {
  const res = await fetch(service.url + path, { method, headers: { authorization: token(), 'content-type': 'application/json' }, ...(body !== undefined && { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text(), etag: res.headers.get('etag') };
}

/** What a client can see of a catalogue: every book, each book's ETag, the feed, and the position. */
async function seen(service: RunningService): Promise<{ books: string; etags: (string | null)[]; changes: string }> {
  const books = await call(service, 'GET', '/books');
  const ids = (JSON.parse(books.text) as { data: { id: number }[] }).data.map((b) => b.id);
  return { books: books.text, etags: await Promise.all(ids.map(async (id) => (await call(service, 'GET', `/book/${id}`)).etag)), changes: (await call(service, 'GET', '/changes?since=0')).text };
}

describe('book-catalogue move: the file store to PostgreSQL and back (docs/scaling-out.md)', needsPostgres(), () => {
  const temp = tempDirs('pg-move-');
  let cluster: Cluster;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await killAll();
    await cluster?.remove();
    await temp.removeAll();
  });

  it('keeps every book\'s bytes and ETag, the changes with their seqs, and the next id, both ways', async () => {
    const files = await temp.make();
    const url = await cluster.createDatabase();
    const serve = async (env: Record<string, string>, dataDir: string): Promise<RunningService> => startMain({ args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], cwd: dataDir, env: { ...ENV, ...env } });

    let service = await serve({}, files);
    for (let n = 1; n <= 5; n++) assert.equal((await call(service, 'POST', '/book', { title: `Book ${n} "quoted" \u0000`, author: 'Mover', year: 2000 + n })).status, 201);
    await call(service, 'PUT', '/book/2', { year: 1999 });
    await call(service, 'DELETE', '/book/5');
    const before = await seen(service);
    await service.stop();

    const there = await runMain({ args: ['move', 'to-postgres', '--data-dir', files], cwd: files, env: { STORE_URL: url } });
    assert.equal(there.code, 0, there.stderr);
    assert.match(there.stderr, /moved 4 books from .* to postgresql:\/\/postgres@\/.* \(next id 6, feed at seq 7\)/);
    service = await serve({ STORE_URL: url }, await temp.make());
    assert.deepEqual(await seen(service), before, 'on PostgreSQL');
    const sixth = await call(service, 'POST', '/book', { title: 'Sixth', author: 'Mover', year: 2006 });
    assert.match(sixth.text, /"id":6,/, 'the id of the deleted book 5 is not given again');
    const onPostgres = await seen(service);
    await service.stop();

    const back = await temp.make();
    const returned = await runMain({ args: ['move', 'to-files', '--data-dir', back], cwd: back, env: { STORE_URL: url } });
    assert.equal(returned.code, 0, returned.stderr);
    service = await serve({}, back);
    assert.deepEqual(await seen(service), onPostgres, 'back on the file store');
    assert.match((await call(service, 'POST', '/book', { title: 'Seventh', author: 'Mover', year: 2007 })).text, /"id":7,/);
    await service.stop();

    // The commands docs/scaling-out.md shows are the ones run here.
    const doc = await readFile(new URL('../docs/scaling-out.md', import.meta.url), 'utf8');
    for (const command of ['book-catalogue move to-postgres --data-dir ./data', 'book-catalogue move to-files --data-dir ./restored']) assert.ok(doc.includes(`STORE_URL=postgres://catalogue:secret@db.internal/books ${command}\n`), command);

    const again = await runMain({ args: ['move', 'to-postgres', '--data-dir', back], cwd: back, env: { STORE_URL: url } });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^book-catalogue: move failed: the database already holds a catalogue; move into an empty one\n$/);
  });

  it('without the store package installed where the core looks, STORE_URL fails startup with one line naming the package', async () => {
    const dir = await temp.make();
    // A copy of the core's dist/ alone: neither node_modules nor packages/ beside it.
    const { cp } = await import('node:fs/promises');
    await cp(new URL('../dist', import.meta.url), `${dir}/dist`, { recursive: true });
    await cp(new URL('../package.json', import.meta.url), `${dir}/package.json`);
    const { spawnSync } = await import('node:child_process');
    const run = spawnSync(process.execPath, [`${dir}/dist/main.js`, '--port', '0', '--data-dir', `${dir}/data`], { env: { PATH: process.env.PATH ?? '', ...ENV, STORE_URL: 'postgres://nobody:secret@127.0.0.1:1/none' }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 1);
    assert.equal(
      run.stderr,
      'book-catalogue: STORE_URL names PostgreSQL, whose store is the package @book-catalogue/store-postgres: install it beside book-catalogue (npm install @book-catalogue/store-postgres), or in a checkout run npm ci --prefix packages/store-postgres\n',
    );
  });
});
