import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parseBookId } from '../src/books/book-id.ts';
import { HttpError } from '../src/http/messages.ts';
import { InvalidBookError, validFields, validPatch } from '../src/model/valid-book.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { BAD_TEXT, BAD_YEAR, bodyWith, EMOJI, VALID } from './helpers/hostile-books.ts';

const INVALID_INPUT = { status: 400, message: 'Invalid input', data: null };

describe('book validation over HTTP (docs/contract.md, "Books")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  const post = (rawBody: string) => app.request('POST', '/book', { rawBody });

  describe('POST /book: 400 Invalid input when a field breaks its rule', () => {
    const rows = [
      ...BAD_TEXT.map(([name, value]) => ['title', name, value] as const),
      ...BAD_TEXT.map(([name, value]) => ['author', name, value] as const),
      ...BAD_YEAR.map(([name, value]) => ['year', name, value] as const),
    ];
    for (const [field, name, value] of rows) {
      it(`400 Invalid input when ${field} is ${name}`, async () => {
        const res = await post(bodyWith(field, value));
        assert.equal(res.status, 400);
        assert.deepEqual(res.json, INVALID_INPUT);
      });
    }
    it('nothing was stored by any of them', async () => {
      assert.deepEqual((await app.request('GET', '/books')).json.data, []);
    });
  });

  describe('POST /book: accepted values', () => {
    const rows: { name: string; body: string; stored: Partial<typeof VALID> }[] = [
      { name: 'a title of exactly 1000 characters', body: bodyWith('title', JSON.stringify('a'.repeat(1000))), stored: { title: 'a'.repeat(1000) } },
      { name: 'a title of 1000 emoji (2000 UTF-16 units)', body: bodyWith('title', JSON.stringify(EMOJI.repeat(1000))), stored: { title: EMOJI.repeat(1000) } },
      { name: 'an author of exactly 1000 characters', body: bodyWith('author', JSON.stringify('b'.repeat(1000))), stored: { author: 'b'.repeat(1000) } },
      { name: 'year -9999', body: bodyWith('year', '-9999'), stored: { year: -9999 } },
      { name: 'year 9999', body: bodyWith('year', '9999'), stored: { year: 9999 } },
      { name: 'year 0', body: bodyWith('year', '0'), stored: { year: 0 } },
      { name: 'year 2020.0 (an integer value)', body: bodyWith('year', '2020.0'), stored: { year: 2020 } },
      { name: 'year 1e3 (an integer value)', body: bodyWith('year', '1e3'), stored: { year: 1000 } },
      { name: 'a title with surrounding spaces, stored exactly as given', body: bodyWith('title', '"  Dune  "'), stored: { title: '  Dune  ' } },
      { name: 'a title with a decomposed é, not normalised', body: bodyWith('title', '"Mise\\u0301rables"'), stored: { title: 'Mise\u0301rables' } },
      { name: 'a one-character title', body: bodyWith('title', '"X"'), stored: { title: 'X' } },
      { name: 'control characters and quotes in the author', body: bodyWith('author', '"a\\"b\\\\c\\u0001"'), stored: { author: 'a"b\\c\u0001' } },
    ];
    for (const row of rows) {
      it(`201 for ${row.name}; GET returns it exactly`, async () => {
        const res = await post(row.body);
        assert.equal(res.status, 201, res.text);
        const book = res.json.data as { id: number };
        const expected = { id: book.id, ...VALID, ...row.stored };
        assert.deepEqual(book, expected);
        assert.deepEqual((await app.request('GET', `/book/${book.id}`)).json.data, expected);
      });
    }
  });

  it('an id in a POST body is ignored: the service assigns ids', async () => {
    const res = await app.request('POST', '/book', { body: { id: 999, ...VALID } });
    const { id } = res.json.data as { id: number };
    assert.notEqual(id, 999);
    assert.equal((await app.request('GET', '/book/999')).status, 404);
  });

  it('unknown fields are ignored and never stored', async () => {
    const res = await app.request('POST', '/book', { body: { ...VALID, isbn: '123', extra: { deep: true } } });
    const { id } = res.json.data as { id: number };
    assert.deepEqual(Object.keys(res.json.data as object), ['id', 'title', 'author', 'year']);
    const read = await app.request('GET', `/book/${id}`);
    assert.ok(!read.text.includes('isbn') && !read.text.includes('extra'));
    const list = await app.request('GET', '/books');
    assert.ok(!list.text.includes('isbn'));
  });

  it('a response Book has exactly the keys id, title, author, year in that order, whatever the body order', async () => {
    const res = await post('{"year":1,"author":"a","title":"t"}');
    assert.match(res.text, /"data":\{"id":\d+,"title":"t","author":"a","year":1\}\}$/);
    const id = (res.json.data as { id: number }).id;
    for (const r of [await app.request('GET', `/book/${id}`), await app.request('PUT', `/book/${id}`, { rawBody: '{"year":2,"title":"u"}' })]) {
      assert.deepEqual(Object.keys(r.json.data as object), ['id', 'title', 'author', 'year']);
    }
    const list = (await app.request('GET', '/books')).json.data as object[];
    for (const book of list) assert.deepEqual(Object.keys(book), ['id', 'title', 'author', 'year']);
  });

  describe('PUT /book/{id}: each field present must pass the same rule; a failing PUT changes nothing', () => {
    let id: number;
    before(async () => {
      id = ((await app.request('POST', '/book', { body: VALID })).json.data as { id: number }).id;
    });
    const rows = [
      ...BAD_TEXT.filter(([name]) => name !== 'missing').map(([name, value]) => [`{"title":${value}}`, `title is ${name}`] as const),
      ...BAD_TEXT.filter(([name]) => name !== 'missing').map(([name, value]) => [`{"author":${value}}`, `author is ${name}`] as const),
      ...BAD_YEAR.filter(([name]) => name !== 'missing').map(([name, value]) => [`{"year":${value}}`, `year is ${name}`] as const),
      ['{"title":"New title","year":"1966"}', 'a valid title comes with an invalid year'] as const,
      ['{"title":"New title","author":""}', 'a valid title comes with a blank author'] as const,
    ];
    for (const [body, name] of rows) {
      it(`400 Invalid input when ${name}, and the book is unchanged`, async () => {
        const res = await app.request('PUT', `/book/${id}`, { rawBody: body });
        assert.deepEqual(res.json, INVALID_INPUT);
        assert.deepEqual((await app.request('GET', `/book/${id}`)).json.data, { id, ...VALID });
      });
    }
    it('{} is a valid PUT: a no-op, 200 with the unchanged book', async () => {
      const res = await app.request('PUT', `/book/${id}`, { rawBody: '{}' });
      assert.deepEqual(res.json, { status: 200, message: 'Book updated successfully', data: { id, ...VALID } });
    });
    it('a PUT of only unknown fields and an id is a no-op too', async () => {
      const res = await app.request('PUT', `/book/${id}`, { body: { id: 5000, isbn: 'x' } });
      assert.deepEqual(res.json.data, { id, ...VALID });
    });
    it('a PUT stores strings exactly as given', async () => {
      const title = ` ${EMOJI.repeat(998)} `;
      const res = await app.request('PUT', `/book/${id}`, { body: { title } });
      assert.equal((res.json.data as { title: string }).title, title);
    });
  });
});

describe('the valid-book rule and the id parser (no HTTP)', () => {
  const isInvalid = (message: string) => (err: unknown) => err instanceof HttpError && err.status === 400 && err.message === message;

  it('validFields returns exactly title, author, year', () => {
    assert.deepEqual(validFields({ id: 3, extra: 1, year: 1e3, author: 'a', title: 't' }), { title: 't', author: 'a', year: 1000 });
  });
  it('validFields refuses a missing field with InvalidBookError (answered 400 Invalid input)', () => {
    assert.throws(() => validFields({ title: 't', author: 'a' }), InvalidBookError);
  });
  it('validPatch keeps only the fields present', () => {
    assert.deepEqual(validPatch({}), {});
    assert.deepEqual(validPatch({ year: -9999, id: 1 }), { year: -9999 });
  });
  it('validPatch refuses a present field set to null', () => {
    assert.throws(() => validPatch({ title: null }), InvalidBookError);
  });
  it('parseBookId: decimal digits naming a safe integer; 007 is 7', () => {
    assert.equal(parseBookId('007'), 7);
    assert.equal(parseBookId('0'), 0);
    assert.equal(parseBookId(String(Number.MAX_SAFE_INTEGER)), Number.MAX_SAFE_INTEGER);
    for (const bad of ['', 'abc', '-1', '1.5', '1e3', '+1', ' 1', '%31', String(Number.MAX_SAFE_INTEGER + 1), '99999999999999999999']) {
      assert.throws(() => parseBookId(bad), isInvalid('Invalid book id'), JSON.stringify(bad));
    }
  });
});
