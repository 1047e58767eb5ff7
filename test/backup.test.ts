import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { exportCatalogue } from '../src/cli/backup.ts';
import { parseCommand, type Book } from '../src/index.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { MAIN, runMain, type Exit } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/** `node dist/main.js args` run to its end, with a clean environment. */
const cli = (args: readonly string[], env: Record<string, string> = {}): Promise<Exit> => runMain({ args, env, cwd: tmpdir() });

const temp = tempDirs('book-catalogue-backup-');
const tempDir = temp.make;
after(() => temp.removeAll());

describe('book-catalogue export / import', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ dataDir: await tempDir() });
    for (const [title, year] of [['Dune', 1965], ['Emma', 1815], ['Ulysses', 1922], ['Beloved', 1987], ['Solaris', 1961]] as const) {
      await app.request('POST', '/book', { body: { title, author: `Author of ${title}`, year } });
    }
    await app.request('DELETE', '/book/2');
    await app.request('PUT', '/book/3', { body: { title: 'Ulysses (annotated)' } });
  });
  after(() => app.close());

  it('export writes the catalogue as a JSON array to stdout while the service runs on the directory', async () => {
    const exported = await cli(['export', '--data-dir', app.dataDir]);
    assert.equal(exported.code, 0, exported.stderr);
    assert.deepEqual(JSON.parse(exported.stdout), (await app.request('GET', '/books')).json.data);
  });

  it('import into an empty directory round-trips every book, ids kept, and the next id follows the largest', async () => {
    const file = join(await tempDir(), 'backup.json');
    await writeFile(file, (await cli(['export', '--data-dir', app.dataDir])).stdout);
    const target = join(await tempDir(), 'restored');
    const imported = await cli(['import', file, '--data-dir', target]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stderr, /imported 4 books/);
    const restored = await startApp({ dataDir: target });
    try {
      assert.deepEqual((await restored.request('GET', '/books')).json.data, (await app.request('GET', '/books')).json.data);
      const created = await restored.request('POST', '/book', { body: { title: 'New', author: 'A', year: 2000 } });
      assert.equal((created.json.data as Book).id, 6);
    } finally {
      await restored.close();
    }
  });

  it('import reads stdin when the file is -', async () => {
    const target = join(await tempDir(), 'from-stdin');
    const child = execFile(process.execPath, [MAIN, 'import', '-', '--data-dir', target], { env: { PATH: process.env.PATH ?? '' } });
    child.stdin?.end('[{"id":9,"title":"T","author":"A","year":1}]');
    const code = await new Promise((resolve) => child.on('close', resolve));
    assert.equal(code, 0);
    assert.equal((await cli(['export', '--data-dir', target])).stdout, '[\n{"id":9,"title":"T","author":"A","year":1}\n]\n');
  });

  it('import refuses a data directory that already holds a catalogue, and changes nothing', async () => {
    const target = await tempDir();
    const file = join(target, '..', `${target.split('/').pop()}.json`);
    await writeFile(file, '[{"id":1,"title":"T","author":"A","year":1}]');
    assert.equal((await cli(['import', file, '--data-dir', target])).code, 0);
    await writeFile(file, '[{"id":5,"title":"Other","author":"B","year":2}]');
    const again = await cli(['import', file, '--data-dir', target]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^book-catalogue: import failed: data directory .* already holds a catalogue/);
    assert.deepEqual(JSON.parse((await cli(['export', '--data-dir', target])).stdout), [{ id: 1, title: 'T', author: 'A', year: 1 }]);
    await rm(file);
  });

  it('import refuses a directory a running service holds (its lock)', async () => {
    const empty = await startApp({ dataDir: await tempDir() });
    try {
      const file = join(await tempDir(), 'one.json');
      await writeFile(file, '[{"id":1,"title":"T","author":"A","year":1}]');
      const refused = await cli(['import', file, '--data-dir', empty.dataDir]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /in use by another process/);
      assert.deepEqual((await empty.request('GET', '/books')).json.data, []);
    } finally {
      await empty.close();
    }
  });

  const badFiles = [
    { name: 'not JSON', text: '[{"id":1,', error: /is not JSON/ },
    { name: 'not an array', text: '{"books":[]}', error: /expected a JSON array/ },
    { name: 'a blank title', text: '[{"id":1,"title":" ","author":"A","year":1}]', error: /book at index 0 is not valid/ },
    { name: 'a year that is not an integer', text: '[{"id":1,"title":"T","author":"A","year":1.5}]', error: /book at index 0 is not valid/ },
    { name: 'id 0', text: '[{"id":1,"title":"T","author":"A","year":1},{"id":0,"title":"T","author":"A","year":1}]', error: /book at index 1 is not valid/ },
    { name: 'an id twice', text: '[{"id":1,"title":"T","author":"A","year":1},{"id":1,"title":"U","author":"A","year":1}]', error: /id 1 appears twice/ },
  ];
  for (const bad of badFiles) {
    it(`import refuses a file with ${bad.name} and writes nothing`, async () => {
      const dir = await tempDir();
      await writeFile(join(dir, 'in.json'), bad.text);
      const target = join(dir, 'data');
      const result = await cli(['import', join(dir, 'in.json'), '--data-dir', target]);
      assert.equal(result.code, 1);
      assert.match(result.stderr, bad.error);
      assert.deepEqual(await readdir(target).catch(() => []), []);
    });
  }

  it('export of a directory that does not exist fails with one line and exit 1', async () => {
    const result = await cli(['export', '--data-dir', join(await tempDir(), 'missing')]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^book-catalogue: export failed: no data directory at .*\n$/);
    assert.equal(result.stdout, '');
  });

  it('import of a file that does not exist fails with one line and exit 1, and writes nothing', async () => {
    const target = join(await tempDir(), 'target');
    const result = await cli(['import', join(target, 'missing.json'), '--data-dir', target]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^book-catalogue: import failed: ENOENT: no such file or directory, open '.*missing\.json'\n$/);
    assert.deepEqual(await readdir(target).catch(() => []), []);
  });

  it('export and import use DATA_DIR like the service when --data-dir is absent', async () => {
    const result = await cli(['export'], { DATA_DIR: app.dataDir });
    assert.equal(JSON.parse(result.stdout).length, 4);
  });

  const usage = [
    { argv: ['export', 'extra'], error: /unexpected argument "extra"/ },
    { argv: ['import'], error: /import needs exactly one file/ },
    { argv: ['import', 'a.json', 'b.json'], error: /import needs exactly one file/ },
    { argv: ['export', '--port', '1'], error: /unknown option --port for export/ },
    { argv: ['export', '--data-dir'], error: /--data-dir needs a value/ },
  ];
  for (const row of usage) {
    it(`usage error: ${row.argv.join(' ')}`, () => {
      assert.throws(() => parseCommand({ argv: row.argv, env: {} }), row.error);
    });
  }
});

/** One writer's acknowledged writes, in order, each with the writer's books after it. */
interface WriterLog {
  /** Canonical text of the writer's books after k writes → k. */
  states: Map<string, number>;
  /** Ids this writer created, in order; `createdAfter[k]` = how many of them exist after k writes. */
  created: number[];
  createdAfter: number[];
}

const canonical = (books: readonly Book[]): string => JSON.stringify([...books].sort((a, b) => a.id - b.id));

describe('export during heavy writes', () => {
  it('yields a state that some prefix of the acknowledged writes explains', async () => {
    const dataDir = await tempDir();
    // A small compaction threshold, so snapshots and journals are swapped while exports read.
    const app = await startApp({ dataDir, logLevel: 'warn', storeOptions: { compaction: { minBytes: 4096 } } });
    const call = async (method: string, path: string, body?: unknown): Promise<Book | null> => {
      const { json } = await app.request(method, path, body === undefined ? {} : { body });
      assert.ok(json.status < 300, `${method} ${path}: ${json.status}`);
      return json.data as Book | null;
    };

    const exports: Book[][] = [];
    let writing = true;
    const writer = async (w: number): Promise<WriterLog> => {
      const live = new Map<number, Book>();
      const log: WriterLog = { states: new Map([['[]', 0]]), created: [], createdAfter: [0] };
      // Writes go on until enough exports have run alongside them (event-driven, no timer).
      for (let k = 1; writing && k <= 2000; k++) {
        const ids = [...live.keys()];
        const pick = ids[k % Math.max(1, ids.length)];
        if (pick === undefined || k % 5 < 2) {
          const book = (await call('POST', '/book', { title: `op ${k}`, author: `writer ${w}`, year: k })) as Book;
          live.set(book.id, book);
          log.created.push(book.id);
        } else if (k % 5 < 4) {
          live.set(pick, (await call('PUT', `/book/${pick}`, { title: `op ${k}`, year: k })) as Book);
        } else {
          await call('DELETE', `/book/${pick}`);
          live.delete(pick);
        }
        log.states.set(canonical([...live.values()]), k);
        log.createdAfter.push(log.created.length);
      }
      return log;
    };
    /** Every eighth export runs the CLI in its own process, the others call it in-process. */
    const exportOnce = async (n: number): Promise<Book[]> => {
      if (n % 8 === 0) {
        const result = await cli(['export', '--data-dir', dataDir]);
        assert.equal(result.code, 0, result.stderr);
        return JSON.parse(result.stdout) as Book[];
      }
      let text = '';
      await exportCatalogue(dataDir, new Writable({ write: (chunk: Buffer, _enc, done) => ((text += chunk.toString()), done()) }));
      return JSON.parse(text) as Book[];
    };
    const exporter = async (): Promise<void> => {
      try {
        while (exports.length < 40) exports.push(await exportOnce(exports.length));
      } finally {
        writing = false;
      }
    };
    let logs: WriterLog[];
    try {
      [logs] = await Promise.all([Promise.all([0, 1, 2, 3].map(writer)), exporter()]);
      assert.ok(app.store.stats.compactions > 0, 'compactions ran while exports read');
    } finally {
      await app.close();
    }

    for (const [n, books] of exports.entries()) {
      const createdIds: number[] = [];
      for (const [w, log] of logs.entries()) {
        const own = books.filter((b) => b.author === `writer ${w}`);
        const k = log.states.get(canonical(own));
        assert.ok(k !== undefined, `export ${n}: writer ${w}'s books match no prefix of its writes`);
        createdIds.push(...log.created.slice(0, log.createdAfter[k]));
      }
      // Ids are assigned in commit order: a consistent state holds the creates with ids 1..m.
      createdIds.sort((a, b) => a - b);
      assert.deepEqual(createdIds, createdIds.map((_, i) => i + 1), `export ${n}: creates are not a prefix of the commit order`);
    }
  });
});
