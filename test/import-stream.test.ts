import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { importCatalogue } from '../src/cli/backup.ts';
import { arrayElements } from '../src/cli/json-array.ts';
import { readCatalogue } from '../src/index.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

async function elements(chunks: string[]): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const value of arrayElements(Readable.from(chunks), 'in.json')) out.push(value);
  return out;
}

describe('arrayElements: the elements of a JSON array read in chunks', () => {
  it('gives what JSON.parse gives, wherever the chunks are cut', async () => {
    const text = ' [ {"id":1,"title":"a]b,c{","author":"x\\"y\\\\","year":1},\n[1,[2]] , "s,]" ,{"n":{"m":[{}]}}, 7 ,null]\r\n\t';
    const expected = JSON.parse(text) as unknown[];
    for (let cut = 0; cut <= text.length; cut++) {
      for (const second of [cut, Math.min(text.length, cut + 3)]) {
        assert.deepEqual(await elements([text.slice(0, cut), text.slice(cut, second), text.slice(second)]), expected, `cut at ${cut}, ${second}`);
      }
    }
    assert.deepEqual(await elements(['[', ']']), []);
    assert.deepEqual(await elements([' [\n]\n']), []);
  });

  for (const [text, error] of [
    ['[{"id":1,', /in\.json is not JSON: /],
    ['[1,]', /in\.json is not JSON: /],
    ['[1 2]', /in\.json is not JSON: /],
    ['[1] x', /in\.json is not JSON: /],
    ['[1]]', /in\.json is not JSON: /],
    ['', /in\.json is not JSON: /],
    ['\uFEFF[]', /in\.json is not JSON: /],
    ['[,1]', /in\.json is not JSON: /],
    ['{"books":[]}', /expected a JSON array of books/],
    ['"text"', /expected a JSON array of books/],
  ] as const) {
    it(`refuses ${JSON.stringify(text)}`, async () => {
      await assert.rejects(elements([text]), error);
    });
  }
});

describe('import streams its file', () => {
  const temp = tempDirs('book-catalogue-import-');
  after(() => temp.removeAll());
  const tempDir = temp.make;
  const book = (id: number): string => JSON.stringify({ id, title: `T${id}`, author: 'A', year: 2000 });

  it('a file in ascending id order: every book, the next id after the largest', async () => {
    const dir = await tempDir();
    const ids = Array.from({ length: 5000 }, (_, i) => i * 2 + 1);
    await writeFile(join(dir, 'in.json'), `[\n${ids.map(book).join(',\n')}\n]\n`);
    assert.equal(await importCatalogue(join(dir, 'in.json'), join(dir, 'data'), Readable.from([])), 5000);
    const { books, nextId } = await readCatalogue(join(dir, 'data'));
    assert.deepEqual(books.map((b) => b.id), ids);
    assert.equal(nextId, 10_000);
  });

  it('a file in another order is still imported, sorted', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'in.json'), `[${[5, 2, 9, 1].map(book).join(',')}]`);
    assert.equal(await importCatalogue(join(dir, 'in.json'), join(dir, 'data'), Readable.from([])), 4);
    assert.deepEqual((await readCatalogue(join(dir, 'data'))).books.map((b) => b.id), [1, 2, 5, 9]);
  });

  it('stdin in ascending order is imported; in another order it is refused and nothing is written', async () => {
    const dir = await tempDir();
    assert.equal(await importCatalogue('-', join(dir, 'a'), Readable.from([`[${book(1)},`, `${book(3)}]`])), 2);
    await assert.rejects(importCatalogue('-', join(dir, 'b'), Readable.from([`[${book(3)},${book(1)}]`])), /ascending id order/);
    assert.deepEqual(await readdir(join(dir, 'b')), []);
  });

  it('an invalid book after many valid ones leaves no catalogue behind', async () => {
    const dir = await tempDir();
    const lines = Array.from({ length: 3000 }, (_, i) => book(i + 1));
    await writeFile(join(dir, 'in.json'), `[${lines.join(',')},{"id":3001,"title":"","author":"A","year":1}]`);
    await assert.rejects(importCatalogue(join(dir, 'in.json'), join(dir, 'data'), Readable.from([])), /book at index 3000 is not valid/);
    assert.deepEqual(await readdir(join(dir, 'data')), []);
  });
});
