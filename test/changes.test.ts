import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MAX_CHANGES_PAGE_BYTES } from '../src/events/changes-route.ts';
import { UNEXPECTED_BURST } from '../src/http/reply-writer.ts';
import { REPEATED_FAILURE_LOG_MS } from '../src/log.ts';
import { MemoryBudget } from '../src/index.ts';
import { RETAINED_CHANGES } from '../src/store/change-log.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { changes } from './helpers/changes-client.ts';
import { ioError, recordingFs } from './helpers/recording-fs.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'A. Author', year: 2001 });

describe('GET /changes', () => {
  let app: TestApp;
  after(() => app.close());

  it('lists created, updated and deleted changes with their journal seq, ascending, in the envelope', async () => {
    app = await startApp();
    await app.request('POST', '/book', { body: book('One') });
    await app.request('PUT', '/book/1', { body: { year: 2002 } });
    await app.request('DELETE', '/book/1');
    const res = await app.request('GET', '/changes');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(
      res.text,
      '{"status":200,"message":"Changes retrieved successfully","data":[' +
        '{"seq":1,"type":"created","id":1,"book":{"id":1,"title":"One","author":"A. Author","year":2001}},' +
        '{"seq":2,"type":"updated","id":1,"book":{"id":1,"title":"One","author":"A. Author","year":2002}},' +
        '{"seq":3,"type":"deleted","id":1,"book":null}]}',
    );
    assert.equal(res.headers.get('link'), null, 'nothing more follows');
  });

  it('since= answers only what came after; limit= pages with Link rel="next" until nothing more follows', async () => {
    for (let i = 0; i < 5; i++) await app.request('POST', '/book', { body: book(`Page ${i}`) });
    assert.deepEqual((await changes(app, '?since=3')).data.map((c) => c.seq), [4, 5, 6, 7, 8]);
    const first = await changes(app, '?since=2&limit=4');
    assert.deepEqual(first.data.map((c) => c.seq), [3, 4, 5, 6]);
    assert.equal(first.link, '</changes?since=6&limit=4>; rel="next"');
    const second = await changes(app, '?since=6&limit=4');
    assert.deepEqual(second.data.map((c) => c.seq), [7, 8]);
    assert.equal(second.link, null);
    assert.deepEqual((await changes(app, '?since=8')).data, [], 'caught up: an empty page');
  });

  it('401 without a token; 400 Invalid query for a since or limit that is not valid', async () => {
    const anonymous = await app.request('GET', '/changes', { auth: false });
    assert.deepEqual(anonymous.json, { status: 401, message: 'Authorization token required', data: null });
    for (const query of ['?since=abc', '?since=-1', '?since=1.5', '?since=99999999999999999999', '?limit=0', '?limit=1001', '?limit=x', '?since=', '?since=1&since=2']) {
      const res = await app.request('GET', `/changes${query}`);
      assert.deepEqual(res.json, { status: 400, message: 'Invalid query', data: null }, query);
    }
  });

  it('410 Changes no longer available for a since past the last change (another history)', async () => {
    const res = await app.request('GET', '/changes?since=9');
    assert.deepEqual(res.json, { status: 410, message: 'Changes no longer available', data: null });
  });

  it('X-Last-Seq on every 200 and 410: a client that only polls reloads, then follows from it, missing nothing', async () => {
    assert.equal((await changes(app, '?since=8')).headers.get('x-last-seq'), '8');
    assert.equal((await changes(app, '?since=0&limit=1')).headers.get('x-last-seq'), '8', 'the feed, not the page');
    const gone = await changes(app, '?since=9');
    assert.equal(gone.status, 410);
    const from = Number(gone.headers.get('x-last-seq'));
    assert.equal(from, 8);
    // A change between reading the seq and the reload comes again; applied again, the mirror is the same.
    await app.request('POST', '/book', { body: book('Meanwhile') });
    const mirror = new Map(((await app.request('GET', '/books')).json.data as { id: number }[]).map((b) => [b.id, b]));
    for (const c of (await changes(app, `?since=${from}`)).data) {
      if (c.book === null) mirror.delete(c.id);
      else mirror.set(c.id, c.book);
    }
    assert.deepEqual([...mirror.values()], (await app.request('GET', '/books')).json.data);
  });

  it('never lists a change whose write failed (EIO, ENOSPC injected): the next change takes its seq', async () => {
    const rec = recordingFs();
    const failing = await startApp({ storeOptions: { fs: rec.fs } });
    try {
      await failing.request('POST', '/book', { body: book('Kept 1') });
      for (const code of ['EIO', 'ENOSPC']) {
        rec.hooks.datasync = () => {
          delete rec.hooks.datasync;
          throw ioError(code);
        };
        const res = await failing.request('POST', '/book', { body: book(`Failed ${code}`) });
        assert.equal(res.status, 500);
      }
      rec.hooks.write = () => {
        delete rec.hooks.write;
        throw ioError('ENOSPC');
      };
      assert.equal((await failing.request('PUT', '/book/1', { body: { title: 'Failed update' } })).status, 500);
      await failing.request('POST', '/book', { body: book('Kept 2') });
      const listed = await changes(failing, '');
      assert.deepEqual(
        listed.data.map((c) => [c.seq, c.type, c.book?.title]),
        [
          [1, 'created', 'Kept 1'],
          [2, 'created', 'Kept 2'],
        ],
      );
    } finally {
      await failing.close();
    }
  });
});

describe('GET /changes of big books', () => {
  let app: TestApp;
  const temp = tempDirs('changes-big-');
  after(() => Promise.all([app.close(), temp.removeAll()]));

  it('pages stop near MAX_CHANGES_PAGE_BYTES (256 KiB) whatever the limit; following Link gets every change exactly once', async () => {
    app = await startApp();
    // The largest book: a title and an author of 1000 control characters, each escaped to six in JSON.
    const big = '\u0001'.repeat(1000);
    const { id } = await app.store.create({ title: big, author: big, year: 2000 });
    const total = 300;
    for (let i = 1; i < total; i++) await app.store.update(id, { year: 1000 + i });
    const seen: number[] = [];
    let next: string | null = '/changes?since=0&limit=1000';
    let pages = 0;
    while (next !== null) {
      const res = await app.request('GET', next);
      assert.equal(res.status, 200);
      assert.ok(Buffer.byteLength(res.text) <= MAX_CHANGES_PAGE_BYTES + 200, `page ${pages} has ${Buffer.byteLength(res.text)} bytes`);
      seen.push(...(res.json.data as { seq: number }[]).map((c) => c.seq));
      next = /^<([^>]+)>; rel="next"$/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
      pages++;
    }
    assert.deepEqual(seen, Array.from({ length: total }, (_, i) => i + 1));
    assert.ok(pages >= 3, `${pages} pages for about 3.6 MB of changes`);
  });

  it('the retained changes of big books stay within a small budget, the fixed retention shrinking; they survive a compaction and a restart', async () => {
    const limit = 2 * 1024 * 1024;
    const dataDir = await temp.make();
    const rec = recordingFs();
    rec.realSync = false; // about retention, not durability
    const storeOptions = { fs: rec.fs, compaction: { minBytes: 1 << 30 } };
    const budget = new MemoryBudget(limit);
    let small = await startApp({ dataDir, storeOptions: { ...storeOptions, memoryBudget: budget }, memoryBudget: budget });
    try {
      const big = '\u0001'.repeat(1000);
      const { id } = await small.store.create({ title: big, author: big, year: 2000 });
      for (let i = 1; i < 2000; i++) await small.store.update(id, { year: 1000 + (i % 1000) });
      await small.store.compact();
      for (let i = 0; i < 200; i++) await small.store.update(id, { year: 1000 + (i % 1000) });
      assert.ok(budget.heldBy('retained_changes') <= limit, `${budget.heldBy('retained_changes')} bytes of retained changes`);
      const { seq, oldest } = small.store.feed;
      // A change of this book is charged about 24 kB (two bytes per character of its 12 kB of JSON).
      assert.ok(seq - oldest <= limit / 24_000, `${seq - oldest} changes retained`);
      assert.equal((await changes(small, '?since=0')).status, 410, 'a follower from before the oldest retained reloads');
      const tail = await changes(small, `?since=${oldest}&limit=3`);
      assert.deepEqual(tail.data.map((c) => c.seq), [oldest + 1, oldest + 2, oldest + 3]);
      await small.store.compact();
      await small.close({ keepData: true });
      // The snapshot carries what was retained (fewer than RETAINED_CHANGES); the feed follows on from it.
      const again = new MemoryBudget(limit);
      small = await startApp({ dataDir, storeOptions: { ...storeOptions, memoryBudget: again }, memoryBudget: again });
      assert.equal(small.store.feed.seq, seq);
      assert.ok(small.store.feed.oldest < seq && seq - small.store.feed.oldest <= limit / 24_000, `${seq - small.store.feed.oldest} changes after the restart`);
      assert.deepEqual((await changes(small, `?since=${seq - 1}`)).data.map((c) => c.seq), [seq]);
    } finally {
      await small.close();
    }
  });
});

describe('a disk that refuses every write', () => {
  it('fails each write with 500 but logs a bounded number of error lines: the first in full, then one per interval', async () => {
    const rec = recordingFs();
    const failing = await startApp({ storeOptions: { fs: rec.fs } });
    try {
      rec.hooks.write = () => {
        throw ioError('ENOSPC');
      };
      const failures = 200;
      const started = performance.now();
      for (let i = 0; i < failures; i++) assert.equal((await failing.request('POST', '/book', { body: book(`Full ${i}`) })).status, 500);
      const intervals = Math.ceil((performance.now() - started) / REPEATED_FAILURE_LOG_MS);
      const errors = failing.logs.filter((l) => l.includes('"level":50'));
      // In each REPEATED_FAILURE_LOG_MS at most the store's line and the first UNEXPECTED_BURST
      // requests' (each with its detail): a slow machine crosses a few intervals.
      const bound = intervals * (1 + UNEXPECTED_BURST);
      assert.ok(errors.length >= 1 && errors.length <= bound && errors.length < failures / 5, `${errors.length} error lines for ${failures} failed writes in ${intervals} intervals`);
    } finally {
      await failing.close();
    }
  });
});

describe('GET /changes across restarts and compactions', () => {
  const temp = tempDirs('changes-');
  after(() => temp.removeAll());

  it('after a restart the retained changes are rebuilt from the journal, with the same seqs and types, and seq keeps growing', async () => {
    const dataDir = await temp.make();
    let app = await startApp({ dataDir });
    await app.request('POST', '/book', { body: book('Before') });
    await app.request('POST', '/book', { body: book('Second') });
    await app.request('PUT', '/book/1', { body: { year: 1999 } });
    await app.request('DELETE', '/book/2');
    const before = (await changes(app, '')).data;
    await app.close();
    app = await startApp({ dataDir });
    try {
      assert.deepEqual((await changes(app, '')).data, before);
      await app.request('POST', '/book', { body: book('After') });
      assert.deepEqual(
        (await changes(app, '?since=3')).data.map((c) => [c.seq, c.type, c.id]),
        [
          [4, 'deleted', 2],
          [5, 'created', 3],
        ],
      );
    } finally {
      await app.close();
    }
  });

  it('a compaction keeps the last changes answerable and seq growing; past the retained window: 410', async () => {
    const dataDir = await temp.make();
    const rec = recordingFs();
    rec.realSync = false; // about retention, not durability
    // Compaction only when the test asks for it.
    const storeOptions = { fs: rec.fs, compaction: { minBytes: 1 << 30 } };
    const total = RETAINED_CHANGES + 50;
    let app = await startApp({ dataDir, storeOptions });
    try {
      for (let i = 0; i < total; i += 1000) {
        await Promise.all(Array.from({ length: Math.min(1000, total - i) }, (_, j) => app.store.create(book(`Bulk ${i + j}`))));
      }
      assert.equal((await changes(app, '?since=0&limit=3')).data.length, 3, 'before any snapshot every change is retained');
      await app.store.compact();
      assert.equal(app.store.feed.oldest, total - RETAINED_CHANGES);
      assert.equal((await changes(app, '?since=49')).status, 410);
      assert.deepEqual((await changes(app, '?since=50&limit=1')).data.map((c) => c.seq), [51]);
      await app.request('POST', '/book', { body: book('After compaction') });
      const latest = await changes(app, `?since=${total}`);
      assert.deepEqual(latest.data.map((c) => [c.seq, c.book?.title]), [[total + 1, 'After compaction']]);
    } finally {
      await app.close();
    }
    // After a restart: the snapshot carries the last RETAINED_CHANGES before its seq, the journal the rest.
    app = await startApp({ dataDir, storeOptions });
    try {
      assert.deepEqual((await changes(app, `?since=${total}`)).data.map((c) => c.seq), [total + 1]);
      assert.deepEqual((await changes(app, `?since=${total - 1}`)).data.map((c) => c.seq), [total, total + 1]);
      assert.equal(app.store.feed.oldest, total + 1 - RETAINED_CHANGES);
      assert.equal((await changes(app, `?since=${total - RETAINED_CHANGES}`)).status, 410);
    } finally {
      await app.close();
    }
  });
});
