import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { importCatalogue } from '../src/cli/backup.ts';
import { readCatalogue } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { runMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const temp = tempDirs('book-catalogue-import-utf8-');
after(temp.removeAll);

const HEAD = Buffer.from('[{"id":1,"title":"ab', 'utf8');
const TAIL = Buffer.from('cd","author":"A","year":1}]', 'utf8');
/** A one-book export whose title holds `bytes` after "ab": they start at byte HEAD.length. */
const fileWith = (bytes: readonly number[]): Buffer => Buffer.concat([HEAD, Buffer.from(bytes), TAIL]);

/** Ill-formed UTF-8 (Unicode §3.9, Table 3-7), each refused by the API's body reader. */
const INVALID = [
  { name: 'a stray continuation byte', bytes: [0x80] },
  { name: 'a byte that never appears in UTF-8', bytes: [0xff] },
  { name: 'an overlong form of "/"', bytes: [0xc0, 0xaf] },
  { name: 'a surrogate, U+D800', bytes: [0xed, 0xa0, 0x80] },
  { name: 'a code point past U+10FFFF', bytes: [0xf4, 0x90, 0x80, 0x80] },
  { name: 'a three-byte sequence cut short', bytes: [0xe2, 0x82] },
];

describe('import refuses what the API refuses: invalid UTF-8, naming its byte offset', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  for (const { name, bytes } of INVALID) {
    describe(name, () => {
      it('POST /book with it in the title: 400 Invalid input', async () => {
        const body = Buffer.concat([Buffer.from('{"title":"ab'), Buffer.from(bytes), Buffer.from('cd","author":"A","year":1}')]);
        const res = await app.request('POST', '/book', { rawBody: body });
        assert.deepEqual([res.status, res.json.message], [400, 'Invalid input']);
      });

      it(`import: refused at byte ${HEAD.length}, nothing written`, async () => {
        const dir = await temp.make();
        await writeFile(join(dir, 'in.json'), fileWith(bytes));
        await assert.rejects(importCatalogue(join(dir, 'in.json'), join(dir, 'data'), Readable.from([])), {
          name: 'InvalidUtf8Error',
          message: `${join(dir, 'in.json')} is not valid UTF-8 at byte ${HEAD.length}`,
        });
        assert.deepEqual(await readdir(join(dir, 'data')), []);
      });
    });
  }

  it('a character cut by every chunk boundary is joined; an invalid sequence across chunks is named where it starts in the whole stream', async () => {
    const good = Buffer.from('[{"id":1,"title":"é€😀","author":"Ünïcödé","year":1}]', 'utf8');
    for (let cut = 1; cut < good.length; cut++) {
      const dir = await temp.make();
      assert.equal(await importCatalogue('-', dir, Readable.from([good.subarray(0, cut), good.subarray(cut)])), 1, `cut at ${cut}`);
      assert.deepEqual((await readCatalogue(dir)).books, [{ id: 1, title: 'é€😀', author: 'Ünïcödé', year: 1 }]);
    }
    const bad = fileWith([0xe2, 0x82, 0x41]);
    for (let cut = 1; cut < bad.length; cut++) {
      const dir = await temp.make();
      await assert.rejects(importCatalogue('-', dir, Readable.from([bad.subarray(0, cut), bad.subarray(cut)])), { message: `stdin is not valid UTF-8 at byte ${HEAD.length}` }, `cut at ${cut}`);
    }
  });

  it('a sequence cut short at the very end of the file is refused at its first byte', async () => {
    const dir = await temp.make();
    const text = Buffer.from('[{"id":1,"title":"T","author":"A","year":1}]\n', 'utf8');
    await writeFile(join(dir, 'in.json'), Buffer.concat([text, Buffer.of(0xf0, 0x9f, 0x98)]));
    await assert.rejects(importCatalogue(join(dir, 'in.json'), join(dir, 'data'), Readable.from([])), { message: `${join(dir, 'in.json')} is not valid UTF-8 at byte ${text.length}` });
    assert.deepEqual(await readdir(join(dir, 'data')), []);
  });

  it('the CLI: one line naming the file and the offset, exit 1, the data directory left without a catalogue', async () => {
    const dir = await temp.make();
    const file = join(dir, 'in.json');
    await writeFile(file, fileWith([0xff]));
    const result = await runMain({ args: ['import', file, '--data-dir', join(dir, 'data')], cwd: tmpdir() });
    assert.equal(result.code, 1);
    assert.equal(result.stderr, `book-catalogue: import failed: ${file} is not valid UTF-8 at byte ${HEAD.length}\n`);
    assert.deepEqual(await readdir(join(dir, 'data')), []);
  });
});
