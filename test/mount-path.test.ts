import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';

/*
 * An embedder that mounts the catalogue (docs/embedding.md) gives createApp its mount path; the
 * next-page links and a created book's Location must lead to the catalogue under it, not to the
 * host's own /books (RFC 8288 §3.2, RFC 9110 §10.2.2: resolved against the request's URL).
 */
describe('Link and Location targets under a mount path', () => {
  const apps: TestApp[] = [];
  after(async () => {
    await Promise.all(apps.map((a) => a.close()));
  });

  async function mounted(mountPath: string | undefined): Promise<TestApp> {
    const app = await startApp(mountPath === undefined ? {} : { mountPath });
    apps.push(app);
    for (const title of ['Dune', 'Emma', 'Dracula']) {
      assert.equal((await app.request('POST', '/book', { body: { title, author: 'Someone', year: 1900 } })).status, 201);
    }
    return app;
  }

  for (const [mountPath, base] of [
    [undefined, ''],
    ['/catalogue', '/catalogue'],
    ['/catalogue/', '/catalogue'],
    ['https://library.example/catalogue', 'https://library.example/catalogue'],
  ] as const) {
    it(`mountPath ${mountPath ?? '(none)'}: pages, searches and changes link to ${base || 'the root'}`, async () => {
      const app = await mounted(mountPath);
      const page = await app.request('GET', '/books?limit=1');
      assert.equal(page.headers.get('link'), `<${base}/books?limit=1&after=1>; rel="next"`);
      const search = await app.request('GET', '/books?limit=1&q=d');
      assert.equal(search.headers.get('link'), `<${base}/books?limit=1&after=1&q=d>; rel="next"`);
      const changes = await app.request('GET', '/changes?since=0&limit=2');
      assert.equal(changes.headers.get('link'), `<${base}/changes?since=2&limit=2>; rel="next"`);
    });

    it(`mountPath ${mountPath ?? '(none)'}: 201 Created carries Location ${base}/book/{id} (RFC 9110 §15.3.2)`, async () => {
      const app = await mounted(mountPath);
      const created = await app.request('POST', '/book', { body: { title: 'Emma', author: 'Jane Austen', year: 1815 } });
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('location'), `${base}/book/4`);
    });
  }
});
