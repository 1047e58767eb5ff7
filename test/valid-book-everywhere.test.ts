import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { importCatalogue } from '../src/cli/backup.ts';
import { validField } from '../src/model/book-rule.ts';
import { InvalidBookError, writeCatalogue, type Book } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { INVALID_BOOK_ROWS, VALID } from './helpers/hostile-books.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/** The row's POST body as a whole book with an id, as a backup holds it. */
function bookFrom(body: string): unknown {
  return JSON.parse(`{"id":1,${body.slice(1)}`);
}

/**
 * One rule for a valid book (src/model/valid-book.ts): every book POST /book refuses, writeCatalogue
 * and import refuse too, and none of them writes anything.
 */
describe('a book the API refuses is refused everywhere books are accepted', () => {
  const dirs = tempDirs('book-catalogue-valid-book-');
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(async () => {
    await app.close();
    await dirs.removeAll();
  });

  for (const { field, name, body } of INVALID_BOOK_ROWS) {
    describe(`${field} ${name}`, () => {
      it('POST /book: 400 Invalid input', async () => {
        const res = await app.request('POST', '/book', { rawBody: body });
        assert.deepEqual([res.status, res.json.message], [400, 'Invalid input']);
      });

      it('writeCatalogue: InvalidBookError, nothing written', async () => {
        const dir = await dirs.make();
        await assert.rejects(writeCatalogue(dir, [bookFrom(body) as Book]), InvalidBookError);
        assert.deepEqual(await readdir(dir), []);
      });

      it('import: refused naming the book, nothing written', async () => {
        const dir = await dirs.make();
        const file = join(await dirs.make(), 'books.json');
        await writeFile(file, JSON.stringify([{ id: 1, ...VALID }, bookFrom(body)]));
        await assert.rejects(importCatalogue(file, dir, Readable.from([])), /book at index 1 is not valid/);
        assert.deepEqual((await readdir(dir)).filter((n) => n !== 'LOCK'), []);
      });

      it("the built-in page's check (the same rule, field by field): that field is refused", () => {
        const value = (JSON.parse(body) as Record<string, unknown>)[field];
        assert.equal(validField(field, value), false);
      });
    });
  }

  it('the valid book of the table is accepted by all three', async () => {
    assert.equal((await app.request('POST', '/book', { body: VALID })).status, 201);
    for (const [field, value] of Object.entries(VALID)) assert.equal(validField(field as keyof typeof VALID, value), true, field);
    const dir = await dirs.make();
    await writeCatalogue(dir, [{ id: 1, ...VALID }]);
    const file = join(await dirs.make(), 'books.json');
    await writeFile(file, JSON.stringify([{ id: 1, ...VALID }]));
    assert.equal(await importCatalogue(file, await dirs.make(), Readable.from([])), 1);
  });

  it('writeCatalogue, the library route around the API: a blank title, an empty author and year 123456 are refused', async () => {
    const dir = await dirs.make();
    await assert.rejects(writeCatalogue(dir, [{ id: 1, title: '   ', author: '', year: 123456 }]), InvalidBookError);
  });
});
