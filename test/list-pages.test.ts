import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Book } from '../src/index.ts';
import { startApp, type TestApp, type TestResponse } from './helpers/app.ts';

const data = (res: TestResponse): Book[] => res.json.data as Book[];
const ids = (res: TestResponse): number[] => data(res).map((b) => b.id);

/** The `after` of a page's URL (0 when it has none). */
const afterOf = (path: string): number => Number(new URL(path, 'http://x').searchParams.get('after') ?? 0);

/**
 * Follows `Link: <…>; rel="next"` from `first` to the end, running `between` after each page. Each
 * page must hold only ids above its `after`, and each Link must move `after` on, so a walk ends.
 */
async function walk(app: TestApp, first: string, between: (page: number) => Promise<void> = async () => {}): Promise<Book[]> {
  const seen: Book[] = [];
  let next: string | undefined = first;
  for (let page = 0; next !== undefined; page++) {
    const res = await app.request('GET', next);
    assert.equal(res.status, 200, next);
    const after = afterOf(next);
    const books = data(res);
    assert.ok(books.every((b) => b.id > after), `${next} answered ids at or below its after: ${books.map((b) => b.id).join(',')}`);
    seen.push(...books);
    const link = res.headers.get('link');
    const following: string | undefined = link === null ? undefined : /^<([^>]+)>; rel="next"$/.exec(link)?.[1];
    assert.ok(link === null || following !== undefined, `a Link as RFC 8288 writes it: ${link}`);
    assert.ok(following === undefined || afterOf(following) > after, `the Link after ${next} does not move on: ${link}`);
    next = following;
    await between(page);
  }
  return seen;
}

describe('GET /books?limit&after: keyset pages', () => {
  let app: TestApp;
  let books: Book[];
  before(async () => {
    // Gaps in the ids (deleted books) and more than one index page (4,096 ids each).
    books = Array.from({ length: 3000 }, (_, i) => ({ id: 1 + i * 3, title: `Book ${i}`, author: `Author ${i % 10}`, year: 2000 }));
    app = await startApp({ catalogue: books, logLevel: 'warn' });
  });
  after(() => app.close());

  it('limit and after give books with larger ids, ascending, with X-Total-Count and a Link to the next page', async () => {
    const res = await app.request('GET', '/books?limit=5&after=10');
    assert.equal(res.status, 200);
    assert.equal(res.json.message, 'Books retrieved successfully');
    assert.deepEqual(ids(res), [13, 16, 19, 22, 25]);
    assert.equal(res.headers.get('x-total-count'), '3000');
    assert.equal(res.headers.get('link'), '</books?limit=5&after=25>; rel="next"');
  });

  it('walking the pages returns every book once, in order', async () => {
    const seen = await walk(app, '/books?limit=250');
    assert.deepEqual(seen, books);
    assert.deepEqual(await walk(app, '/books?limit=1000&after=0'), books);
  });

  it('the last page has no Link; an empty result is [] with the total', async () => {
    const last = await app.request('GET', `/books?limit=3&after=${books.at(-4)?.id}`);
    assert.deepEqual(ids(last), books.slice(-3).map((b) => b.id));
    assert.equal(last.headers.get('link'), null);
    assert.equal(last.headers.get('x-total-count'), '3000');
    const empty = await app.request('GET', `/books?limit=3&after=${books.at(-1)?.id}`);
    assert.equal(empty.text, '{"status":200,"message":"Books retrieved successfully","data":[]}');
    assert.equal(empty.headers.get('link'), null);
    assert.equal(empty.headers.get('x-total-count'), '3000');
    const beyond = await app.request('GET', `/books?after=${'9'.repeat(400)}`);
    assert.deepEqual(beyond.json.data, []);
  });

  it('after alone pages by 100 (the default limit), and limit alone starts at the first book', async () => {
    const res = await app.request('GET', '/books?after=0');
    assert.deepEqual(ids(res), books.slice(0, 100).map((b) => b.id));
    assert.equal(res.headers.get('link'), `</books?limit=100&after=${books[99]?.id}>; rel="next"`);
    assert.deepEqual(ids(await app.request('GET', '/books?limit=2&x=1')), [1, 4]);
  });

  it('a search across index pages, walked with Link, finds exactly the matching books in order', async () => {
    const expected = books.filter((b) => b.author.toLowerCase().includes('author 3'));
    const first = await app.request('GET', '/books?q=AUTHOR%203&limit=7');
    assert.equal(first.headers.get('x-total-count'), String(expected.length));
    assert.deepEqual(await walk(app, '/books?q=AUTHOR%203&limit=7'), expected);
    assert.deepEqual(await walk(app, `/books?q=book%2029&after=${books[2900]?.id}`), books.slice(2901).filter((b) => b.title.includes('Book 29')));
  });

  it('HEAD with a query has the GET headers and no body', async () => {
    const get = await app.request('GET', '/books?limit=2');
    const head = await fetch(`${app.url}/books?limit=2`, { method: 'HEAD', headers: { authorization: app.token() } });
    assert.equal(head.headers.get('link'), get.headers.get('link'));
    assert.equal(head.headers.get('x-total-count'), get.headers.get('x-total-count'));
    assert.equal(await head.text(), '');
  });
});

describe('walking pages while books change', () => {
  it('books that exist throughout appear exactly once, in order', async () => {
    const books = Array.from({ length: 600 }, (_, i) => ({ id: i + 1, title: `Book ${i}`, author: 'A', year: 2000 }));
    // Started here, not in a hook: a run narrowed to other tests (npm run mutate) skips it whole.
    const app = await startApp({ catalogue: books, logLevel: 'warn' });
    try {
      const deleted = new Set<number>();
      const seen = await walk(app, '/books?limit=50', async (page) => {
        // Deletes ahead of and behind the cursor, an update ahead, and new books at the end.
        for (const id of [page * 50 + 10, 580 - page * 7]) {
          if ((await app.request('DELETE', `/book/${id}`)).status === 200) deleted.add(id);
        }
        assert.equal((await app.request('PUT', `/book/${599 - page}`, { body: { year: 1999 } })).status, 200);
        assert.equal((await app.request('POST', '/book', { body: { title: `New ${page}`, author: 'B', year: 2001 } })).status, 201);
      });
      const seenIds = seen.map((b) => b.id);
      assert.deepEqual(seenIds, [...seenIds].sort((a, b) => a - b), 'ascending');
      assert.equal(new Set(seenIds).size, seenIds.length, 'no book twice');
      for (const book of books) {
        if (!deleted.has(book.id)) assert.ok(seenIds.includes(book.id), `book ${book.id} existed throughout`);
      }
    } finally {
      await app.close();
    }
  });
});

describe('GET /books?q: search by title or author', () => {
  let app: TestApp;
  const titles: [string, string][] = [
    ['Éléments de géométrie', 'Legendre'],
    ['ÉLÉMENTS', 'Euclid'],
    ['Straße der Ölsardinen', 'Walter Kempowski'],
    ['ΟΔΥΣΣΕΙΑ', 'Όμηρος'],
    ['Война и мир', 'Лев Толстой'],
    ['Cafe\u0301 stories', 'Decomposed'],
    ['She said "hi" \\o/', 'Quoting'],
    ['.*', 'Regex'],
    ['Dune', 'Frank Herbert'],
    ['Dune Messiah', 'Frank Herbert'],
    ['Children of Dune', 'Frank Herbert'],
    ['Emma', 'Jane Austen'],
    ['😀 Smile', 'Emoji'],
  ];
  before(async () => {
    app = await startApp({ logLevel: 'warn' });
    for (const [title, author] of titles) await app.request('POST', '/book', { body: { title, author, year: 1965 } });
  });
  after(() => app.close());

  const found = async (q: string): Promise<string[]> => {
    const res = await app.request('GET', `/books?q=${encodeURIComponent(q)}`);
    assert.equal(res.status, 200, q);
    assert.equal(res.headers.get('x-total-count'), String(data(res).length), q);
    return data(res).map((b) => b.title);
  };

  it('matches a substring of the title or of the author, ignoring case, in id order', async () => {
    assert.deepEqual(await found('dUNE'), ['Dune', 'Dune Messiah', 'Children of Dune']);
    assert.deepEqual(await found('austen'), ['Emma']);
    assert.deepEqual(await found('HERBERT'), ['Dune', 'Dune Messiah', 'Children of Dune']);
  });

  it('folds case with Unicode simple case folding: accents, Greek final sigma, Cyrillic, capital sharp s', async () => {
    assert.deepEqual(await found('éléments'), ['Éléments de géométrie', 'ÉLÉMENTS']);
    assert.deepEqual(await found('οδυσσεια'), ['ΟΔΥΣΣΕΙΑ']);
    assert.deepEqual(await found('ΟΔΥΣΣΕΙΑ'.toLowerCase().replace('σ', 'ς')), ['ΟΔΥΣΣΕΙΑ']);
    assert.deepEqual(await found('ВОЙНА'), ['Война и мир']);
    assert.deepEqual(await found('толстой'), ['Война и мир']);
    assert.deepEqual(await found('STRAẞE'), ['Straße der Ölsardinen']);
    assert.deepEqual(await found('όμηρος'.toUpperCase()), ['ΟΔΥΣΣΕΙΑ']);
  });

  it('does no full folding and no normalization: ß is not ss, é is not e + U+0301', async () => {
    assert.deepEqual(await found('strasse'), []);
    assert.deepEqual(await found('café'), []);
    assert.deepEqual(await found('cafe\u0301'), ['Cafe\u0301 stories']);
    assert.deepEqual(await found('e'), (await found('E')));
  });

  it('matches the text as given: quotes, backslashes and pattern characters are literal', async () => {
    assert.deepEqual(await found('"hi"'), ['She said "hi" \\o/']);
    assert.deepEqual(await found('\\o/'), ['She said "hi" \\o/']);
    assert.deepEqual(await found('.*'), ['.*']);
    assert.deepEqual(await found('😀'), ['😀 Smile']);
  });

  it('never matches the JSON around the fields: keys, ids, years, or text across two fields', async () => {
    assert.deepEqual(await found('title'), []);
    assert.deepEqual(await found('1965'), []);
    assert.deepEqual(await found('"author"'), []);
    assert.deepEqual(await found('Dune Frank'), []);
    assert.deepEqual(await found('n","author":"F'), []);
  });

  it('+ and %20 are spaces in q', async () => {
    const res = await app.request('GET', '/books?q=of+dune');
    assert.deepEqual(data(res).map((b) => b.title), ['Children of Dune']);
  });

  it('with limit and after: pages of matches, X-Total-Count counting every match, Link keeping q', async () => {
    const first = await app.request('GET', '/books?q=dune&limit=2');
    assert.deepEqual(data(first).map((b) => b.title), ['Dune', 'Dune Messiah']);
    assert.equal(first.headers.get('x-total-count'), '3');
    const link = first.headers.get('link');
    assert.equal(link, `</books?limit=2&after=${data(first)[1]?.id}&q=dune>; rel="next"`);
    const second = await app.request('GET', /<([^>]+)>/.exec(link as string)?.[1] as string);
    assert.deepEqual(data(second).map((b) => b.title), ['Children of Dune']);
    assert.equal(second.headers.get('x-total-count'), '3');
    assert.equal(second.headers.get('link'), null);
    const spaced = await app.request('GET', '/books?q=Frank%20Herbert&limit=1');
    assert.equal(spaced.headers.get('link'), `</books?limit=1&after=${data(spaced)[0]?.id}&q=Frank%20Herbert>; rel="next"`);
    const none = await app.request('GET', '/books?q=zzz');
    assert.equal(none.text, '{"status":200,"message":"Books retrieved successfully","data":[]}');
    assert.equal(none.headers.get('x-total-count'), '0');
    assert.equal(none.headers.get('link'), null);
  });

  it('q of 200 characters is accepted (an astral character counts once)', async () => {
    assert.equal((await app.request('GET', `/books?q=${encodeURIComponent('😀'.repeat(200))}`)).status, 200);
    assert.equal((await app.request('GET', `/books?q=${'a'.repeat(200)}`)).status, 200);
  });
});

describe('an invalid limit, after or q is 400 Invalid query', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'warn' });
  });
  after(() => app.close());

  for (const query of [
    'limit=0', 'limit=1001', 'limit=abc', 'limit=-1', 'limit=1.5', 'limit=', 'limit=+5', 'limit=%205', 'limit=1e2',
    'after=-1', 'after=abc', 'after=', 'after=1.0', 'after=0x10',
    'q=', `q=${'a'.repeat(201)}`, `q=${encodeURIComponent('😀'.repeat(201))}`,
    'limit=1&limit=2', 'after=1&after=1', 'q=a&q=b', 'q=a&limit=1&q=a', 'x=1&limit=0',
  ]) {
    it(`?${query.slice(0, 40)}`, async () => {
      const res = await app.request('GET', `/books?${query}`);
      assert.equal(res.status, 400);
      assert.deepEqual(res.json, { status: 400, message: 'Invalid query', data: null });
    });
  }

  it('an invalid query still needs a token first (401 before 400)', async () => {
    assert.equal((await app.request('GET', '/books?limit=0', { auth: false })).status, 401);
  });

  it('query strings on other routes are still ignored', async () => {
    assert.equal((await app.request('GET', '/healthz?limit=0', { auth: false })).status, 200);
    const created = await app.request('POST', '/book?limit=0', { body: { title: 't', author: 'a', year: 1 } });
    assert.equal(created.status, 201);
    assert.equal((await app.request('GET', `/book/${(created.json.data as Book).id}?q=`)).status, 200);
  });
});
