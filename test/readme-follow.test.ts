import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { fences } from './helpers/readme-blocks.ts';
import { until, within } from './helpers/wait.ts';

type Follow = (token: string, since: number | undefined, onChange: (change: { seq: number } | null) => void) => Promise<number | undefined>;

/**
 * The `follow` of docs/api.md (Change feed, "Streaming: GET /events"), run as written, with a
 * `fetch` that resolves its relative URL against the test app as a page's would.
 */
async function documentedFollow(base: string): Promise<Follow> {
  const page = await readFile(new URL('../docs/api.md', import.meta.url), 'utf8');
  const block = fences(page).find((f) => f.lang === 'js' && f.lines.some((l) => l.startsWith('async function follow(')));
  assert.ok(block !== undefined, 'docs/api.md shows follow()');
  const pageFetch = (url: string, init: RequestInit): Promise<Response> => fetch(new URL(url, base), init);
  return new Function('fetch', `${block.lines.join('\n')}\nreturn follow;`)(pageFetch) as Follow;
}

const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'A. Author', year: 2001 });

describe("docs/api.md's fetch example follows the feed as it says", () => {
  let app: TestApp;
  let follow: Follow;
  before(async () => {
    app = await startApp();
    follow = await documentedFollow(app.url);
    await app.request('POST', '/book', { body: book('Before') });
  });
  after(() => app.close());

  /** Follows until `count` calls of onChange, then ends the streams (as a drain would) and returns what follow returned and saw. */
  async function run(since: number | undefined, count: number, meanwhile: () => Promise<unknown>): Promise<{ seen: ({ seq: number } | null)[]; returned: number | undefined }> {
    const seen: ({ seq: number } | null)[] = [];
    let enough: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (enough = resolve));
    const following = follow(app.token(), since, (change) => {
      seen.push(change);
      if (seen.length === count) enough();
    });
    await meanwhile();
    await within(`follow() calling onChange ${count} time(s)`, reached);
    // As a drain ends them (then the app serves again, for the next case).
    app.server.app.draining = true;
    const returned = await within('follow() returning once the drain ends its stream', following);
    app.server.app.draining = false;
    return { seen, returned };
  }

  it('from nothing (since undefined): live changes only, and it returns the last seq when the stream ends', async () => {
    const { seen, returned } = await run(undefined, 1, async () => {
      // The stream is open before the change.
      await until('the stream follow() opens', () => app.server.app.eventStreams > 0);
      await app.request('POST', '/book', { body: book('Live') });
    });
    assert.deepEqual(seen.map((c) => c?.seq), [2]);
    assert.equal(returned, 2);
  });

  it('from a seq: every change after it; from one past the last: a reset (onChange(null)) and the current seq', async () => {
    assert.deepEqual((await run(0, 2, async () => undefined)).seen.map((c) => c?.seq), [1, 2]);
    const { seen, returned } = await run(99, 1, async () => undefined);
    assert.deepEqual(seen, [null]);
    assert.equal(returned, 2);
  });
});
