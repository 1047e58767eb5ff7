import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startApp, type Envelope, type TestApp } from './helpers/app.ts';
import { gate, ioError, recordingFs, type RecordingFs } from './helpers/recording-fs.ts';

/** The service over real HTTP, its store on a recording file layer. */
interface Rig {
  rec: RecordingFs;
  app: TestApp;
  call(method: string, path: string, body?: unknown): Promise<Envelope>;
}

async function startRig(): Promise<Rig> {
  const rec = recordingFs();
  // One test sends 64 requests at once from one address, besides the connections earlier tests left
  // open: more than MAX_CONNECTIONS_PER_ADDRESS, a bound this file is not about.
  const app = await startApp({ storeOptions: { fs: rec.fs }, limits: { maxConnectionsPerAddress: 0 } });
  const call: Rig['call'] = async (method, path, body) => (await app.request(method, path, body === undefined ? {} : { body })).json;
  return { rec, app, call };
}

const DUNE = { title: 'Dune', author: 'Frank Herbert', year: 1965 };
const journalOf = (rig: Rig): Promise<string> => readFile(join(rig.app.dataDir, 'journal-0000000000000001.jsonl'), 'utf8');

describe('store durability over HTTP (injected file layer)', () => {
  let rig: Rig;
  before(async () => {
    rig = await startRig();
  });
  beforeEach(() => {
    rig.rec.hooks = {};
  });
  after(() => rig.app.close());

  it('201 is sent only after the journal fdatasync has returned, and a GET meanwhile does not see the book', async () => {
    const held = gate();
    const reached = gate();
    rig.rec.hooks.datasync = async () => {
      reached.open();
      await held.promise;
    };
    let answered = false;
    const post = rig.call('POST', '/book', DUNE).then((r) => {
      answered = true;
      return r;
    });
    await reached.promise;
    try {
      const during = await rig.call('GET', '/books');
      assert.deepEqual(during.data, [], 'read-committed: the pending create is invisible');
      assert.equal((await rig.call('GET', '/book/1')).status, 404);
      assert.equal(answered, false, 'no answer while fdatasync has not returned');
    } finally {
      held.open();
    }
    const created = await post;
    assert.equal(created.status, 201);
    assert.ok(rig.rec.events.includes('datasync journal-0000000000000001.jsonl'));
    assert.equal((await rig.call('GET', '/book/1')).status, 200);
  });

  it('64 concurrent POSTs are written with far fewer fdatasyncs than creates (group commit)', async () => {
    const before = rig.app.store.stats;
    const syncs = rig.rec.events.filter((e) => e.startsWith('datasync')).length;
    // Hold the first flush until the other 63 have arrived, as a slow disk would.
    const held = gate();
    rig.rec.hooks.datasync = () => held.promise;
    let answered = 0;
    const posts = Array.from({ length: 64 }, (_, i) => rig.call('POST', '/book', { ...DUNE, year: i }).finally(() => answered++));
    // Bounded: if the requests never queue up, the test fails here instead of spinning until its timeout.
    for (let turn = 0; turn < 200_000 && rig.app.store.stats.queued < 63 && answered === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(rig.app.store.stats.queued, 63, 'the other 63 creates queued behind the held fdatasync');
    held.open();
    const answers = await Promise.all(posts);
    assert.ok(answers.every((a) => a.status === 201));
    const used = rig.rec.events.filter((e) => e.startsWith('datasync')).length - syncs;
    assert.equal(rig.app.store.stats.records - before.records, 64);
    assert.equal(used, 2, `${used} fdatasyncs for 64 creates: the first alone, then the 63 that queued meanwhile`);
  });

  it('the next batch is written before the batch just made durable is answered, and each is answered only after its own fdatasync', async () => {
    const held = gate();
    const reached = gate();
    let syncs = 0;
    rig.rec.hooks.datasync = async () => {
      if (++syncs > 1) return;
      reached.open();
      await held.promise;
    };
    let firstAnswered = false;
    const first = rig.app.store.create(DUNE).then((book) => {
      firstAnswered = true;
      return book;
    });
    await reached.promise;
    let secondAnswered = false;
    const second = rig.app.store.create({ ...DUNE, year: 1966 }).then((book) => {
      secondAnswered = true;
      return book;
    });
    let firstAnsweredAtSecondWrite: boolean | undefined;
    rig.rec.hooks.write = () => {
      firstAnsweredAtSecondWrite ??= firstAnswered;
    };
    let secondAnsweredAtItsSync: boolean | undefined;
    rig.rec.hooks.datasync = () => {
      secondAnsweredAtItsSync ??= secondAnswered;
    };
    held.open();
    await first;
    assert.equal(firstAnsweredAtSecondWrite, false, "the second batch's write started before the first batch's answers (its fdatasync overlaps them)");
    await second;
    assert.equal(secondAnsweredAtItsSync, false, 'the second batch is not answered before its own fdatasync');
  });

  const failures = [
    { step: 'write' as const, error: 'ENOSPC' },
    { step: 'datasync' as const, error: 'EIO' },
  ];
  for (const { step, error } of failures) {
    it(`a failed journal ${step} (${error}) answers 500 Internal server error, changes nothing, and writes recover`, async () => {
      const listBefore = await rig.call('GET', '/books');
      const fileBefore = await journalOf(rig);
      const seqBefore = rig.app.store.stats.seq;
      // One failure: the disk works again for the cut-back and for later writes.
      rig.rec.hooks[step] = () => {
        rig.rec.hooks = {};
        throw ioError(error);
      };
      const failed = await rig.call('POST', '/book', DUNE);
      assert.deepEqual(failed, { status: 500, message: 'Internal server error', data: null });
      assert.deepEqual(await rig.call('GET', '/books'), listBefore, 'memory unchanged and reads keep working');
      assert.equal(await journalOf(rig), fileBefore, 'the journal is cut back to its last durable length');
      const created = await rig.call('POST', '/book', DUNE);
      assert.equal(created.status, 201);
      const ids = (listBefore.data as { id: number }[]).map((b) => b.id);
      assert.equal((created.data as { id: number }).id, Math.max(0, ...ids) + 1, 'the failed create burned no id');
      assert.equal(rig.app.store.stats.seq, seqBefore + 1);
    });
  }
});
