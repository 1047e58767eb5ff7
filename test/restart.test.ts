import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp } from './helpers/app.ts';
import { loginToken } from './helpers/login.ts';
import { killAll, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-restart-');
after(() => temp.removeAll());

const book = (title: string) => ({ title, author: 'a', year: 2000 });

describe('restart on the same data directory (docs/contract.md, "Books" and "Durability")', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await temp.make();
  });

  it('keeps every book, the next id (never reused after deletes), and tokens signed with the same secret', async () => {
    const first = await startApp({ dataDir });
    for (const title of ['one', 'two', 'three', 'four']) await first.request('POST', '/book', { body: book(title) });
    await first.request('PUT', '/book/2', { body: { title: 'two, revised' } });
    await first.request('DELETE', '/book/4');
    await first.request('DELETE', '/book/1');
    const token = first.token();
    const before = (await first.request('GET', '/books')).json.data;
    await first.close({ keepData: true });

    const second = await startApp({ dataDir });
    try {
      const list = await second.request('GET', '/books', { headers: { authorization: token } });
      assert.equal(list.status, 200, 'a token issued before the restart is valid');
      assert.deepEqual(list.json.data, before);
      assert.deepEqual(
        (list.json.data as { id: number; title: string }[]).map((b) => [b.id, b.title]),
        [
          [2, 'two, revised'],
          [3, 'three'],
        ],
      );
      const created = await second.request('POST', '/book', { body: book('five') });
      assert.equal((created.json.data as { id: number }).id, 5, 'id 4 (deleted, the highest) is not reused');
      assert.equal((await second.request('GET', '/book/4')).status, 404);
    } finally {
      await second.close({ keepData: true });
    }
  });

  it('the next id survives even when every book was deleted', async () => {
    const dir = await temp.make();
    const first = await startApp({ dataDir: dir });
    await first.request('POST', '/book', { body: book('a') });
    await first.request('POST', '/book', { body: book('b') });
    await first.request('DELETE', '/book/1');
    await first.request('DELETE', '/book/2');
    await first.close({ keepData: true });
    const second = await startApp({ dataDir: dir });
    try {
      assert.deepEqual((await second.request('GET', '/books')).json.data, []);
      assert.equal(((await second.request('POST', '/book', { body: book('c') })).json.data as { id: number }).id, 3);
    } finally {
      await second.close({ keepData: true });
    }
  });
});

// A safety net, not a measurement: a child that never prints its startup line fails the file instead of hanging it.
describe('restart of the process with a generated secret (docs/contract.md, "Configuration")', { timeout: 30_000 }, () => {
  let cwd: string;
  before(async () => {
    cwd = await temp.make();
  });
  after(killAll);

  it('books, the next id and tokens issued before the restart all survive, because the generated secret persists', async () => {
    const env = { AUTH_PASSWORD: 'restart-password' };
    const args = ['--host', '127.0.0.1', '--port', '0'];
    const first = await startMain({ cwd, env, args });
    const token = await loginToken(first.url, env.AUTH_PASSWORD);
    const headers = { authorization: token };
    for (const title of ['kept', 'deleted']) {
      const res = await fetch(`${first.url}/book`, { method: 'POST', headers, body: JSON.stringify(book(title)) });
      assert.equal(res.status, 201);
    }
    assert.equal((await fetch(`${first.url}/book/2`, { method: 'DELETE', headers })).status, 200);
    assert.equal((await first.stop('SIGTERM')).code, 0);

    const second = await startMain({ cwd, env, args });
    try {
      const list = await fetch(`${second.url}/books`, { headers });
      assert.equal(list.status, 200, 'the token from before the restart is valid');
      assert.deepEqual(((await list.json()) as { data: unknown }).data, [{ id: 1, ...book('kept') }]);
      const created = await fetch(`${second.url}/book`, { method: 'POST', headers, body: JSON.stringify(book('new')) });
      assert.equal(((await created.json()) as { data: { id: number } }).data.id, 3, 'id 2 is never reused');
    } finally {
      assert.equal((await second.stop('SIGINT')).code, 0);
    }
  });
});
