import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it, type TestContext } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { HEARTBEAT } from '../src/events/sse-frames.ts';
import type { Book } from '../src/model/book.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';
import { launchBrowser, type Browser, type Page } from './helpers/browser.ts';
import { findTool, needs } from './helpers/system-tools.ts';

/** Where a failing check leaves its screenshot (git-ignored). */
const RESULTS = new URL('../test-results/', import.meta.url);
/** More than three pages of 100, so that the page a book is on is never found by luck. */
const BOOKS = 1300;
/** The page reloads this long after a change arrives on its feed (src/ui/page/main.ts). */
const LIVE_DEBOUNCE_MS = 150;

/**
 * The page with its live feed on, over a catalogue of 13 pages, in two tabs: what a person sees
 * when their own writes and other people's come back through GET /events while they work.
 */
describe('the built-in page with live updates, 1,300 books, two tabs', needs('chromium'), () => {
  let app: TestApp;
  let browser: Browser;
  /** Tab A, and tab B (another person, or the same one in a second tab). */
  let page: Page;
  let other: Page;
  let skewMs = 0;
  const now = (): number => Date.now() + skewMs;
  const api = (method: string, path: string, body?: unknown) =>
    app.request(method, path, { ...(body !== undefined && { body }), headers: { authorization: signToken(TEST_USER, Buffer.from(TEST_SECRET), now() / 1000) } });

  function check(name: string, body: (t: TestContext) => Promise<void>): void {
    it(name, async (t) => {
      try {
        await body(t);
      } catch (err) {
        mkdirSync(RESULTS, { recursive: true });
        for (const [tab, shown] of [
          ['a', page],
          ['b', other],
        ] as const) {
          if (shown === undefined) continue;
          const file = fileURLToPath(new URL(`live-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}-tab-${tab}.png`, RESULTS));
          await shown.screenshot(file).then(
            () => t.diagnostic(`screenshot: ${file}`),
            (shotErr: unknown) => t.diagnostic(`no screenshot: ${(shotErr as Error).message}`),
          );
        }
        throw err;
      }
    });
  }

  const text = (tab: Page, id: string): Promise<string> => tab.evaluate<string>(`document.getElementById(${JSON.stringify(id)}).textContent`);
  const waitForText = (tab: Page, id: string, expected: string | RegExp): Promise<unknown> => {
    const test = typeof expected === 'string' ? `t === ${JSON.stringify(expected)}` : `${expected.toString()}.test(t)`;
    return tab.waitFor(`((t) => ${test})(document.getElementById(${JSON.stringify(id)}).textContent)`);
  };
  const highlighted = (tab: Page, id: number): Promise<unknown> => tab.waitFor(`document.querySelector('#rows tr.highlight')?.dataset.id === '${id}'`, { timeoutMs: 15_000 });
  const clickRowButton = (tab: Page, id: number, label: 'Edit' | 'Delete'): Promise<void> =>
    tab.click(`#rows tr[data-id="${id}"] button:${label === 'Edit' ? 'first-of-type' : 'last-of-type'}`);
  const dialogOpen = (tab: Page, id: string): Promise<unknown> => tab.waitFor(`document.getElementById(${JSON.stringify(id)}).open`);
  const dialogClosed = (tab: Page, id: string): Promise<unknown> => tab.waitFor(`!document.getElementById(${JSON.stringify(id)}).open`);
  const stored = async (id: number): Promise<Book | null> => (await api('GET', `/book/${id}`)).json.data as Book | null;

  async function openSignedIn(): Promise<Page> {
    const tab = await browser.newPage();
    await tab.setViewport(1280, 900);
    await tab.goto(`${app.url}/`);
    await dialogOpen(tab, 'signin-dialog');
    await tab.fill('#username', TEST_USER);
    await tab.fill('#password', TEST_PASSWORD);
    await tab.press('Enter');
    await dialogClosed(tab, 'signin-dialog');
    await waitForText(tab, 'feed-status', /^Live:/);
    return tab;
  }

  /** The page's own GET /events stream, whose data is watched to know when a change has reached it. */
  const feedRequest = (tab: Page): string => {
    const events = tab.record.sent.filter((r) => new URL(r.url).pathname.endsWith('/events'));
    const last = events[events.length - 1];
    assert.ok(last !== undefined, 'the page follows GET /events');
    return last.requestId;
  };

  /**
   * Holds the first list request the page sends after `act` until the change that `act` makes
   * has come back through the page's feed and the reload that it schedules has had its time: the
   * order in which a busy machine can run them, made certain. The reload's timer is the race
   * itself, and a correct page shows nothing when it fires (the reload waits for the move), so
   * there is no event to wait for: the page's own timers are given three times its delay.
   */
  async function withOwnChangeComingBack(tab: Page, act: () => Promise<void>): Promise<void> {
    const feed = feedRequest(tab);
    const held = await tab.intercept('*/books?*', 1);
    try {
      const arrived = tab.waitForEvent<{ requestId: string; dataLength: number }>(
        'Network.dataReceived',
        (p) => p.requestId === feed && p.dataLength > HEARTBEAT.length,
        "the change coming back on the page's own feed",
      );
      await act();
      const first = await held.next('the first list request after the write');
      await arrived;
      await tab.evaluate(`new Promise((resolve) => setTimeout(resolve, ${3 * LIVE_DEBOUNCE_MS}))`);
      await first.release();
    } finally {
      await held.stop();
    }
  }

  before(async () => {
    const catalogue = Array.from({ length: BOOKS }, (_, k): Book => ({ id: k + 1, title: `Book ${k + 1}`, author: `Author ${(k + 1) % 40}`, year: 1900 + ((k + 1) % 120) }));
    app = await startApp({ ui: true, now, logLevel: 'warn', catalogue });
    browser = await launchBrowser(findTool('chromium') as string);
    page = await openSignedIn();
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  check('counts are written as the reader writes them: 1,300 books, Page 1 of 13', async () => {
    await waitForText(page, 'summary', '1,300 books; showing ids 1–100.');
    assert.equal(await text(page, 'page-info'), 'Page 1 of 13');
  });

  check("Add lands on the new book's page (14 of 14) highlighted, while its change comes back through the feed mid-way", async () => {
    const listRequests = (): number => page.record.sent.filter((r) => r.url.includes('/books?')).length;
    const before = listRequests();
    await withOwnChangeComingBack(page, async () => {
      await page.fill('#add-title', 'Added live');
      await page.fill('#add-author', 'Live Author');
      await page.fill('#add-year', '2025');
      await page.press('Enter');
    });
    await highlighted(page, 1301);
    await waitForText(page, 'page-info', 'Page 14 of 14');
    await waitForText(page, 'notice', 'Added “Added live” (id 1301); it is highlighted on page 14.');
    assert.equal(await page.evaluate(`document.querySelector('#rows tr').dataset.id`), '1301', 'page 14 starts with the 1,301st book');
    // Count, find where the page starts, the page, and the reload the change asked for: no walk through 13 pages.
    assert.ok(listRequests() - before <= 5, `went straight to the page: ${listRequests() - before} list requests`);
    await page.click('#prev');
    await waitForText(page, 'page-info', 'Page 13 of 14');
    assert.equal(await page.evaluate(`[...document.querySelectorAll('#rows tr')].map((tr) => tr.dataset.id).join()`), Array.from({ length: 100 }, (_, k) => 1201 + k).join(), 'Previous shows page 13');
    await page.click('#next');
    await waitForText(page, 'page-info', 'Page 14 of 14');
  });

  check('Save lands on its page with the book highlighted, while its change comes back through the feed', async () => {
    await page.fill('#search', '');
    await page.press('Enter');
    await waitForText(page, 'page-info', 'Page 1 of 14');
    await page.click('#next');
    await waitForText(page, 'page-info', 'Page 2 of 14');
    await page.click('#next');
    await waitForText(page, 'page-info', 'Page 3 of 14');
    await clickRowButton(page, 250, 'Edit');
    await dialogOpen(page, 'edit-dialog');
    await page.fill('#edit-title', 'Saved live');
    await withOwnChangeComingBack(page, () => page.press('Enter'));
    await highlighted(page, 250);
    await waitForText(page, 'notice', 'Saved “Saved live”; it is highlighted on page 3.');
    assert.equal(await text(page, 'page-info'), 'Page 3 of 14');
  });

  check('two tabs: Apply my changes sends only what this tab changed, so the Year the other tab saved survives', async () => {
    other = await openSignedIn();
    for (const tab of [page, other]) {
      await tab.fill('#search', '');
      await tab.press('Enter');
      await waitForText(tab, 'page-info', 'Page 1 of 14');
    }
    await clickRowButton(page, 7, 'Edit');
    await dialogOpen(page, 'edit-dialog');
    await page.fill('#edit-title', 'Seven, retitled in tab A');

    await clickRowButton(other, 7, 'Edit');
    await dialogOpen(other, 'edit-dialog');
    await other.fill('#edit-year', '1976');
    await other.press('Enter');
    await dialogClosed(other, 'edit-dialog');
    assert.equal((await stored(7))?.year, 1976);
    const seenEtag = (await api('GET', '/book/7')).headers.get('etag');

    await page.click('#edit-save');
    await page.waitFor(`!document.getElementById('conflict').hidden`);
    assert.deepEqual(await page.evaluate(`[...document.querySelectorAll('#conflict-current dd')].map((dd) => dd.textContent)`), ['Book 7', 'Author 7', '1976']);
    assert.deepEqual(await page.evaluate(`[...document.querySelectorAll('#conflict-changes li')].map((li) => li.textContent)`), ['Title: “Book 7” → “Seven, retitled in tab A”'], 'what applying would change');
    assert.equal(await text(page, 'conflict-reapply'), 'Apply my changes');
    assert.equal(await page.evaluate(`document.getElementById('conflict-reapply').classList.contains('danger')`), false, 'it overwrites nothing of theirs');
    assert.equal(await page.evaluate(`document.getElementById('edit-year').value`), '1976', 'the form shows their Year, which saving keeps');
    await page.click('#conflict-reapply');
    await dialogClosed(page, 'edit-dialog');
    const put = page.record.sent.filter((r) => r.method === 'PUT' && r.url.endsWith('/book/7')).at(-1);
    assert.deepEqual([put?.body, put?.headers['if-match']], ['{"title":"Seven, retitled in tab A"}', seenEtag], 'only the changed field, against the version shown');
    assert.deepEqual(await stored(7), { id: 7, title: 'Seven, retitled in tab A', author: 'Author 7', year: 1976 }, 'the Year tab B saved survives');

    // Both change the Year: applying would replace theirs, and the button says so.
    await clickRowButton(page, 7, 'Edit');
    await dialogOpen(page, 'edit-dialog');
    await page.fill('#edit-year', '1980');
    await other.waitFor(`document.querySelector('#rows tr[data-id="7"] td:nth-child(2)').textContent === 'Seven, retitled in tab A'`);
    await clickRowButton(other, 7, 'Edit');
    await dialogOpen(other, 'edit-dialog');
    await other.fill('#edit-year', '1990');
    await other.press('Enter');
    await dialogClosed(other, 'edit-dialog');
    await page.click('#edit-save');
    await page.waitFor(`!document.getElementById('conflict').hidden`);
    assert.deepEqual(await page.evaluate(`[...document.querySelectorAll('#conflict-changes li')].map((li) => li.textContent)`), ['Year: 1990 → 1980 (replaces their change)']);
    assert.equal(await text(page, 'conflict-reapply'), 'Overwrite with my changes');
    assert.equal(await page.evaluate(`document.getElementById('conflict-reapply').classList.contains('danger')`), true, 'the overwriting button looks like one');
    await page.click('#conflict-reapply');
    await dialogClosed(page, 'edit-dialog');
    assert.equal((await stored(7))?.year, 1980);
  });

  check('Delete sends the version the person was asked about (If-Match): a book changed meanwhile is shown again, not deleted', async () => {
    await page.waitFor(`document.querySelector('#rows tr[data-id="8"]') !== null`);
    await clickRowButton(page, 8, 'Delete');
    await dialogOpen(page, 'delete-dialog');
    assert.match(await text(page, 'delete-question'), /^Delete “Book 8” by Author 8 \(1908\)\?/);
    assert.equal((await api('PUT', '/book/8', { title: 'Changed while A decides' })).status, 200);
    await page.click('#delete-confirm');
    await waitForText(page, 'delete-question', /^This book was changed since you saw it; this is how it is now\. Delete “Changed while A decides” by Author 8/);
    assert.equal((await api('GET', '/book/8')).status, 200, 'the book changed meanwhile was not deleted');
    const deletes = page.record.sent.filter((r) => r.method === 'DELETE' && r.url.endsWith('/book/8'));
    assert.ok(deletes.length === 1 && deletes[0]?.headers['if-match'] !== undefined, 'the DELETE named the version asked about');
    await page.click('#delete-confirm');
    await dialogClosed(page, 'delete-dialog');
    await waitForText(page, 'notice', 'Deleted “Changed while A decides”.');
    assert.equal((await api('GET', '/book/8')).status, 404);
  });

  check("a search the person has typed past never shows: the older answer is dropped, even when it comes last", async () => {
    await page.evaluate(`(() => {
      window.summaries = [];
      new MutationObserver(() => window.summaries.push(document.getElementById('summary').textContent)).observe(document.getElementById('summary'), { childList: true, characterData: true, subtree: true });
    })()`);
    const held = await page.intercept('*q=Book+12*', 1);
    try {
      await page.fill('#search', 'Book 12');
      const older = await held.next('the search for “Book 12”');
      await page.fill('#search', 'Book 13');
      await waitForText(page, 'summary', /^\d+ books match “Book 13”/);
      if (await older.release()) {
        await page.waitForEvent<{ requestId: string }>('Network.loadingFinished', (p) => p.requestId === older.networkId, 'the older answer to arrive');
        await page.evaluate('new Promise((resolve) => setTimeout(resolve))');
      }
    } finally {
      await held.stop();
    }
    const shown = await page.evaluate<string[]>('window.summaries');
    assert.deepEqual(
      shown.filter((s) => !s.includes('“Book 13”')),
      [],
      'the older search, or its failure, was never shown',
    );
    assert.match(await text(page, 'summary'), /^\d+ books match “Book 13”/);
  });

  check('after adding a book the search hides, the search is cleared and the book shown highlighted', async () => {
    assert.equal(await page.evaluate(`document.getElementById('search').value`), 'Book 13');
    await page.fill('#add-title', 'Hidden by the search');
    await page.fill('#add-author', 'Someone');
    await page.fill('#add-year', '2001');
    await page.press('Enter');
    await highlighted(page, 1302);
    assert.equal(await page.evaluate(`document.getElementById('search').value`), '', 'the search that hid the new book is cleared');
    await waitForText(page, 'summary', /^1,301 books;/);
  });

  check('after the connection drops, the page resumes from the last event it saw (Last-Event-ID)', async () => {
    await waitForText(page, 'feed-status', /^Live:/);
    assert.equal((await api('PUT', '/book/1302', { title: 'Seen live' })).status, 200);
    await page.waitFor(`document.querySelector('#rows tr[data-id="1302"] td:nth-child(2)')?.textContent === 'Seen live'`);
    const lastSeq = (await api('GET', '/changes?since=0&limit=1')).headers.get('x-last-seq');
    const reconnect = page.waitForEvent<{ request: { url: string; headers: Record<string, string> } }>(
      'Network.requestWillBeSent',
      (p) => new URL(p.request.url).pathname.endsWith('/events'),
      'the page reconnecting to GET /events',
      { timeoutMs: 15_000 },
    );
    app.server.closeAllConnections();
    const { request } = await reconnect;
    const sent = Object.entries(request.headers).find(([name]) => name.toLowerCase() === 'last-event-id')?.[1];
    assert.equal(sent, lastSeq, 'the reconnect resumes from the last event the page saw (Last-Event-ID)');
    await waitForText(page, 'feed-status', /^Live:/);
  });

  check('when the service stops accepting the sign-in, the page says live updates stopped and offers to resume', async () => {
    skewMs += 16 * 60_000; // every token the tabs hold is now past its exp
    app.server.closeAllConnections();
    await waitForText(page, 'feed-status', 'Live updates stopped: the service no longer accepts this sign-in.');
    assert.equal(await page.evaluate(`document.getElementById('feed-resume').hidden`), false, 'Resume is offered');
    await page.click('#feed-resume');
    await dialogOpen(page, 'signin-dialog');
    assert.equal(await text(page, 'signin-note'), 'Sign in again to resume live updates.');
    await page.fill('#password', TEST_PASSWORD);
    await page.press('Enter');
    await dialogClosed(page, 'signin-dialog');
    await waitForText(page, 'feed-status', /^Live:/);
    assert.equal(await page.evaluate(`document.getElementById('feed-resume').hidden`), true);
  });

  check('neither tab logged an error', async () => {
    assert.deepEqual([...page.record.errors, ...other.record.errors], []);
  });
});
