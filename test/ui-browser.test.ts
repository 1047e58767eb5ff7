import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it, type TestContext } from 'node:test';
import { signToken } from '../src/auth/jwt.ts';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';
import { launchBrowser, type Browser, type Page } from './helpers/browser.ts';
import { findTool, needs } from './helpers/system-tools.ts';

/** Where a failing check leaves its screenshot (git-ignored). */
const RESULTS = new URL('../test-results/', import.meta.url);
/** `UPDATE_UI_SCREENSHOT=1 node --import tsx --test test/ui-browser.test.ts` refreshes the pictures in the README and docs/page.md. */
const DESKTOP_SCREENSHOT = new URL('../docs/page-desktop.png', import.meta.url);
const PHONE_SCREENSHOT = new URL('../docs/page-phone.png', import.meta.url);
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 375, height: 740 };

const BOOKS = 250;
const TOLKIEN = new Set([42, 137, 201]);
const XSS_TITLE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';

interface ApiBook {
  id: number;
  title: string;
  author: string;
  year: number;
}

describe('the built-in page in Debian chromium', needs('chromium'), () => {
  let app: TestApp;
  let browser: Browser;
  let page: Page;
  /** The service's clock runs ahead by this much: tokens expire and login windows pass without waiting. */
  let skewMs = 0;
  const now = (): number => Date.now() + skewMs;
  const api = (method: string, path: string, body?: unknown) =>
    app.request(method, path, { ...(body !== undefined && { body }), headers: { authorization: signToken(TEST_USER, Buffer.from(TEST_SECRET), now() / 1000) } });

  /** Every check runs as a subtest that saves a screenshot of the page when it fails. */
  function check(name: string, body: (t: TestContext) => Promise<void>): void {
    it(name, async (t) => {
      try {
        await body(t);
      } catch (err) {
        const file = new URL(`${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`, RESULTS);
        mkdirSync(RESULTS, { recursive: true });
        await page.screenshot(fileURLToPath(file)).then(
          () => t.diagnostic(`screenshot: ${fileURLToPath(file)}`),
          (shotErr: unknown) => t.diagnostic(`no screenshot: ${(shotErr as Error).message}`),
        );
        throw err;
      }
    });
  }

  const text = (id: string): Promise<string> => page.evaluate<string>(`document.getElementById(${JSON.stringify(id)}).textContent`);
  const rowIds = (): Promise<number[]> => page.evaluate<number[]>(`[...document.querySelectorAll('#rows tr')].map((tr) => Number(tr.dataset.id))`);
  const waitForText = (id: string, expected: string | RegExp): Promise<unknown> => {
    const test = typeof expected === 'string' ? `t === ${JSON.stringify(expected)}` : `${expected.toString()}.test(t)`;
    return page.waitFor(`((t) => ${test})(document.getElementById(${JSON.stringify(id)}).textContent)`);
  };
  const clickRowButton = (id: number, label: 'Edit' | 'Delete'): Promise<void> => page.click(`#rows tr[data-id="${id}"] button:${label === 'Edit' ? 'first-of-type' : 'last-of-type'}`);
  const dialogOpen = (id: string): Promise<unknown> => page.waitFor(`document.getElementById(${JSON.stringify(id)}).open`);
  const dialogClosed = (id: string): Promise<unknown> => page.waitFor(`!document.getElementById(${JSON.stringify(id)}).open`);
  /** Whether the element is on screen now, whole: its box within the viewport. */
  const inView = (selector: string): Promise<boolean> =>
    page.evaluate<boolean>(`(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; })()`);

  before(async () => {
    app = await startApp({ ui: true, now, loginMaxFailures: 2, logLevel: 'warn' });
    for (let first = 1; first <= BOOKS; first += 25) {
      await Promise.all(
        Array.from({ length: 25 }, (_, k) => first + k).map((i) =>
          api('POST', '/book', { title: i === 42 ? 'The Hobbit' : `Book ${i}`, author: TOLKIEN.has(i) ? 'J. R. R. Tolkien' : `Author ${i}`, year: 1900 + (i % 120) }),
        ),
      );
    }
    browser = await launchBrowser(findTool('chromium') as string);
    page = await browser.newPage();
    await page.setViewport(DESKTOP.width, DESKTOP.height);
    await page.goto(`${app.url}/`);
  });

  after(async () => {
    await browser?.close();
    await app?.close();
  });

  check('the first view is under 72 KB and its CSP has no unsafe-inline', async () => {
    await dialogOpen('signin-dialog');
    // Headers included (each of the 23 files carries about 400 bytes of them); test/ui-server.test.ts bounds the files alone.
    const transferred = [...page.record.transferred.values()].reduce((a, b) => a + b, 0);
    assert.ok(transferred > 0 && transferred < 72 * 1024, `${transferred} bytes`);
    const res = await fetch(`${app.url}/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
  });

  check('sign in: wrong password shows Invalid credentials, 429 says when to retry, then the right one opens the catalogue', async () => {
    const labels = await page.evaluate<string[]>(`['username', 'password'].map((id) => document.querySelector('label[for=' + id + ']').textContent)`);
    assert.deepEqual(labels, ['Username', 'Password']);
    assert.equal(await page.evaluate(`document.querySelector('#signin-form button[type=submit]').textContent`), 'Sign in');
    assert.equal(await page.evaluate(`getComputedStyle(document.getElementById('catalogue')).display`), 'none', 'nothing of the catalogue shows');
    const hint = await text('signin-hint');
    assert.match(hint, /username is admin\b/, 'a first-time user learns the default username');
    assert.match(hint, /file auth-password in its data directory \(DATA_DIR\)/, 'and where the generated password is kept');
    assert.ok(!hint.includes(TEST_USER) && !hint.includes(TEST_PASSWORD), "the hint reveals nothing of this service's own credentials");
    await page.fill('#username', TEST_USER);
    await page.fill('#password', 'wrong password');
    await page.press('Enter');
    await waitForText('signin-error', 'Invalid credentials');
    await page.fill('#password', 'wrong again');
    await page.click('#signin-form button[type=submit]');
    await page.waitFor(`document.getElementById('signin-error').textContent === 'Invalid credentials' && performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/token')).length === 2`);
    await page.fill('#password', TEST_PASSWORD);
    await page.press('Enter');
    await waitForText('signin-error', /^Too many login attempts\. Try again in 1[45] minutes \(at .+\)\.$/);
    assert.equal(await page.evaluate(`document.getElementById('signin-dialog').open`), true);
    skewMs += 15 * 60_000 + 1000; // the throttle's window passes
    await page.press('Enter');
    await dialogClosed('signin-dialog');
    assert.notEqual(await page.evaluate(`getComputedStyle(document.getElementById('catalogue')).display`), 'none');
  });

  check('pages through 250 books, never more than 100 rows, with Next and Previous', async () => {
    await waitForText('page-info', 'Page 1 of 3');
    const expectIds = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, k) => from + k);
    assert.deepEqual(await rowIds(), expectIds(1, 100));
    assert.match(await text('summary'), /^250 books; showing ids 1–100\.$/);
    assert.equal(await page.evaluate(`document.getElementById('prev').disabled`), true);
    await page.click('#next');
    await waitForText('page-info', 'Page 2 of 3');
    assert.deepEqual(await rowIds(), expectIds(101, 200));
    await page.click('#next');
    await waitForText('page-info', 'Page 3 of 3');
    assert.deepEqual(await rowIds(), expectIds(201, 250));
    assert.equal(await page.evaluate(`document.getElementById('next').disabled`), true);
    await page.click('#prev');
    await waitForText('page-info', 'Page 2 of 3');
    assert.deepEqual(await rowIds(), expectIds(101, 200));
    await page.click('#prev');
    await waitForText('page-info', 'Page 1 of 3');
    assert.deepEqual(await rowIds(), expectIds(1, 100));
  });

  check('Search narrows the list as one types, case-insensitively, with q; Escape clears it', async () => {
    await page.fill('#search', 'tOLKIEN');
    await waitForText('summary', /^3 books match “tOLKIEN”/);
    assert.deepEqual(await rowIds(), [...TOLKIEN]);
    assert.ok(page.record.requests.some((url) => new URL(url).searchParams.get('q') === 'tOLKIEN'), 'the search went to the service as q');
    await page.fill('#search', 'hobbit');
    await waitForText('summary', /^1 book matches “hobbit”/);
    assert.deepEqual(await rowIds(), [42]);
    await page.press('Escape');
    await waitForText('summary', /^250 books;/);
    assert.equal(await page.evaluate(`document.getElementById('search').value`), '');
  });

  check('Add book: a wrong field is named with its rule before anything is sent; a valid book is shown highlighted on its page', async () => {
    const posts = (): number => page.record.sent.filter((r) => r.method === 'POST' && r.url.endsWith('/book')).length;
    const sentBefore = posts();
    await page.fill('#add-title', 'Only a title');
    await page.fill('#add-author', '');
    await page.fill('#add-year', '');
    await page.click('#add-form button[type=submit]');
    await waitForText('add-error', 'Not sent: check Author and Year.');
    assert.equal(await text('add-author-problem'), 'Author is missing: not blank, at most 1000 characters.', 'the field and its rule are named');
    assert.equal(await text('add-year-problem'), 'Year is missing: a whole number from -9999 to 9999.');
    assert.equal(await page.evaluate(`document.getElementById('add-author').getAttribute('aria-invalid')`), 'true');
    assert.equal(await page.evaluate(`document.activeElement.id`), 'add-author', 'the focus is on the first field to fix');
    assert.equal(posts(), sentBefore, 'nothing was sent');
    await page.fill('#add-title', '   ');
    await page.fill('#add-author', 'Nobody');
    await page.fill('#add-year', '2024');
    await page.click('#add-form button[type=submit]');
    await waitForText('add-title-problem', 'Title is missing: not blank, at most 1000 characters.');
    await waitForText('add-error', 'Not sent: check Title.');
    await page.fill('#add-title', 'A new book');
    await page.fill('#add-author', 'New Author');
    await page.press('Enter');
    await page.waitFor(`document.querySelector('#rows tr.highlight')?.dataset.id === '251'`);
    await waitForText('page-info', 'Page 3 of 3');
    await waitForText('notice', 'Added “A new book” (id 251); it is highlighted on page 3.');
    assert.deepEqual(await page.evaluate(`['add-error', 'add-title-problem', 'add-author-problem', 'add-year-problem'].map((id) => document.getElementById(id).textContent)`), ['', '', '', '']);
    assert.equal(await page.evaluate(`document.querySelector('#rows tr.highlight td:nth-child(2)').textContent`), 'A new book');
    assert.equal(await page.evaluate(`document.getElementById('add-title').value`), '', 'the form is ready for the next book');
    assert.ok(await inView('#rows tr.highlight'), 'the new book is on screen');
    assert.ok(await inView('#notice'), 'and so is the notice');
  });

  check('Edit: the dialog holds the book; Save sends it and the row shows the change', async () => {
    await clickRowButton(251, 'Edit');
    await dialogOpen('edit-dialog');
    assert.deepEqual(await page.evaluate(`['edit-title', 'edit-author', 'edit-year'].map((id) => document.getElementById(id).value)`), ['A new book', 'New Author', '2024']);
    assert.equal(await page.evaluate(`document.activeElement.id`), 'edit-title');
    await page.fill('#edit-title', 'A renamed book');
    await page.press('Enter');
    await dialogClosed('edit-dialog');
    await page.waitFor(`document.querySelector('#rows tr[data-id="251"] td:nth-child(2)').textContent === 'A renamed book'`);
    assert.equal(((await api('GET', '/book/251')).json.data as ApiBook).title, 'A renamed book');
  });

  check('edit conflict: a change made through the API meanwhile gives 412; the page shows it, then reapply or discard', async () => {
    await clickRowButton(251, 'Edit');
    await dialogOpen('edit-dialog');
    assert.equal((await api('PUT', '/book/251', { year: 1999 })).status, 200);
    await page.fill('#edit-author', 'My Author');
    await page.press('Enter');
    await page.waitFor(`!document.getElementById('conflict').hidden`);
    assert.deepEqual(await page.evaluate(`[...document.querySelectorAll('#conflict-current dd')].map((dd) => dd.textContent)`), ['A renamed book', 'New Author', '1999']);
    assert.equal(((await api('GET', '/book/251')).json.data as ApiBook).author, 'New Author', 'nothing was overwritten');
    await page.click('#conflict-reapply');
    await dialogClosed('edit-dialog');
    await page.waitFor(`document.querySelector('#rows tr[data-id="251"] td:nth-child(3)').textContent === 'My Author'`);
    assert.deepEqual((await api('GET', '/book/251')).json.data, { id: 251, title: 'A renamed book', author: 'My Author', year: 1999 }, 'the year changed meanwhile is kept');

    await clickRowButton(251, 'Edit');
    await dialogOpen('edit-dialog');
    assert.equal((await api('PUT', '/book/251', { title: 'Their title' })).status, 200);
    await page.fill('#edit-title', 'My title');
    await page.click('#edit-save');
    await page.waitFor(`!document.getElementById('conflict').hidden`);
    await page.click('#conflict-discard');
    await dialogClosed('edit-dialog');
    await page.waitFor(`document.querySelector('#rows tr[data-id="251"] td:nth-child(2)').textContent === 'Their title'`);
    assert.equal(((await api('GET', '/book/251')).json.data as ApiBook).title, 'Their title');
  });

  check('Delete asks first: Cancel keeps the book, Delete removes it', async () => {
    await clickRowButton(251, 'Delete');
    await dialogOpen('delete-dialog');
    assert.match(await text('delete-question'), /^Delete “Their title” by My Author \(1999\)\?/);
    assert.equal(await page.evaluate(`document.activeElement.id`), 'delete-cancel', 'the safe choice has the focus');
    await page.click('#delete-cancel');
    await dialogClosed('delete-dialog');
    assert.equal((await api('GET', '/book/251')).status, 200);
    await clickRowButton(251, 'Delete');
    await dialogOpen('delete-dialog');
    await page.click('#delete-confirm');
    await dialogClosed('delete-dialog');
    await page.waitFor(`document.querySelector('#rows tr[data-id="251"]') === null`);
    assert.equal((await api('GET', '/book/251')).status, 404);
  });

  check('after Save far down a page, the notice, the pager and the saved row are all on screen (1280×900)', async () => {
    await page.fill('#search', '');
    await page.press('Enter');
    await waitForText('page-info', 'Page 1 of 3');
    await page.click('#next');
    await waitForText('page-info', 'Page 2 of 3');
    await clickRowButton(199, 'Edit');
    await dialogOpen('edit-dialog');
    await page.fill('#edit-title', 'Renamed far down');
    await page.press('Enter');
    await dialogClosed('edit-dialog');
    await waitForText('notice', 'Saved “Renamed far down”; it is highlighted on page 2.');
    assert.ok(await page.evaluate<boolean>('scrollY > 2000'), 'the page is scrolled far down, to the row');
    assert.ok(await inView('#notice'), 'the notice is within the viewport');
    assert.ok(await inView('#next'), 'the pager is within the viewport');
    assert.ok(await inView('#rows tr.highlight[data-id="199"]'), 'the saved row is within the viewport, highlighted');
    assert.equal(await page.evaluate(`document.activeElement.closest('tr')?.dataset.id`), '199', 'the focus is back on its row');
    await page.click('#prev');
    await waitForText('page-info', 'Page 1 of 3');
  });

  check('a title made of HTML and script is shown as text and runs nothing', async () => {
    const created = await api('POST', '/book', { title: XSS_TITLE, author: '<b>bold</b>', year: 2000 });
    assert.equal(created.status, 201);
    await page.fill('#search', 'onerror');
    await waitForText('summary', /^1 book matches/);
    assert.deepEqual(
      await page.evaluate(`[...document.querySelectorAll('#rows tr td')].slice(1, 3).map((td) => td.textContent)`),
      [XSS_TITLE, '<b>bold</b>'],
    );
    const id = (created.json.data as ApiBook).id;
    await clickRowButton(id, 'Delete');
    await dialogOpen('delete-dialog');
    assert.ok((await text('delete-question')).includes(XSS_TITLE));
    await page.press('Escape');
    await dialogClosed('delete-dialog');
    assert.equal(await page.evaluate(`document.querySelectorAll('#rows img, #rows script, #rows b, #delete-question *').length`), 0);
    assert.equal(await page.evaluate(`window.__pwned === undefined`), true);
    await page.fill('#search', '');
    await waitForText('summary', /^251 books;/);
  });

  check('a long title wraps in its own cell; headers, id, year and the row buttons keep one line', async () => {
    const title = 'The Life and Strange Surprizing Adventures of Robinson Crusoe, of York, Mariner: Who lived Eight and Twenty Years, all alone in an un-inhabited Island';
    const created = await api('POST', '/book', { title, author: 'Daniel Defoe', year: 1719 });
    assert.equal(created.status, 201);
    await page.fill('#search', 'Surprizing');
    await waitForText('summary', /^1 book matches/);
    // Lines of text in an element: one client rect per line box of its contents.
    const layout = await page.evaluate<{ headers: number[]; cells: number[]; title: number; buttonsSideBySide: boolean }>(`(() => {
      const lines = (el) => { const r = document.createRange(); r.selectNodeContents(el); return r.getClientRects().length; };
      const cells = [...document.querySelectorAll('#rows tr td')];
      const [edit, del] = [...cells[4].querySelectorAll('button')].map((b) => b.getBoundingClientRect().top);
      return { headers: [...document.querySelectorAll('thead th')].slice(0, 4).map(lines), cells: [lines(cells[0]), lines(cells[3])], title: lines(cells[1]), buttonsSideBySide: edit === del };
    })()`);
    assert.deepEqual(layout.headers, [1, 1, 1, 1], 'header words are not broken');
    assert.deepEqual(layout.cells, [1, 1], 'id and year are not broken');
    assert.ok(layout.title > 1, 'the title wraps instead');
    assert.equal(layout.buttonsSideBySide, true, 'Edit and Delete sit side by side');
    assert.equal((await api('DELETE', `/book/${(created.json.data as ApiBook).id}`)).status, 200);
    await page.fill('#search', '');
    await waitForText('summary', /^251 books;/);
  });

  check('token expiry: the person signs in again, keeps what they typed, and the action completes', async () => {
    await page.fill('#add-title', 'Typed before expiry');
    await page.fill('#add-author', 'Patient Author');
    await page.fill('#add-year', '1999');
    skewMs += 16 * 60_000; // the page's token is now past its exp
    await page.click('#add-form button[type=submit]');
    await dialogOpen('signin-dialog');
    assert.match(await text('signin-note'), /session has expired/);
    assert.deepEqual(await page.evaluate(`['add-title', 'add-author', 'add-year'].map((id) => document.getElementById(id).value)`), ['Typed before expiry', 'Patient Author', '1999']);
    assert.equal(await page.evaluate(`document.getElementById('username').value`), TEST_USER);
    await page.fill('#password', TEST_PASSWORD);
    await page.press('Enter');
    await dialogClosed('signin-dialog');
    await page.waitFor(`document.querySelector('#rows tr.highlight td:nth-child(2)')?.textContent === 'Typed before expiry'`);
    const all = (await api('GET', '/books?q=Typed%20before')).json.data as ApiBook[];
    assert.deepEqual(all.map((b) => [b.title, b.author, b.year]), [['Typed before expiry', 'Patient Author', 1999]]);
  });

  check('live updates: a book another client adds appears without a reload', async (t) => {
    const feed = await fetch(`${app.url}/events`, { headers: { authorization: signToken(TEST_USER, Buffer.from(TEST_SECRET), now() / 1000) } });
    await feed.body?.cancel();
    if (feed.status === 404) {
      t.skip('this build has no change feed (GET /events)');
      return;
    }
    await waitForText('feed-status', /^Live:/);
    const created = await api('POST', '/book', { title: 'Arrived live', author: 'Elsewhere', year: 2025 });
    const id = (created.json.data as ApiBook).id;
    await page.waitFor(`document.querySelector('#rows tr[data-id="${id}"] td:nth-child(2)')?.textContent === 'Arrived live'`);
  });

  check('keyboard: the first Tab stop is a skip link to Add a book; Search to Next is one Tab; Tab order, visible focus, Escape closes a dialog', async () => {
    await page.fill('#search', '');
    await page.press('Enter');
    await waitForText('page-info', /^Page 1 of/);
    const focused = (): Promise<string> =>
      page.evaluate<string>(`(() => { const a = document.activeElement; const row = a.closest('tr'); return (row ? row.dataset.id + ' ' : '') + (a.id || a.textContent); })()`);
    // As on a page just loaded: the next Tab starts from the top of the document.
    await page.evaluate(`(() => { const root = document.documentElement; root.tabIndex = -1; root.focus(); root.removeAttribute('tabindex'); window.scrollTo(0, 0); })()`);
    await page.press('Tab');
    assert.equal(await focused(), 'skip-to-add', 'the first Tab stop is the skip link');
    assert.ok(await inView('#skip-to-add'), 'it shows when focused');
    await page.press('Enter');
    assert.equal(await focused(), 'add-title', 'Enter on it moves the focus to the Add form');
    assert.equal(await page.evaluate('location.hash'), '', 'the URL keeps nothing');
    await page.evaluate(`document.getElementById('search').focus()`);
    await page.press('Tab');
    assert.equal(await focused(), 'next', 'from Search, Next is one Tab away (Previous is disabled on the first page)');

    await page.fill('#search', 'tolkien');
    await waitForText('summary', /^3 books match/);
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.press('Tab');
      order.push(await focused());
      assert.equal(await page.evaluate(`getComputedStyle(document.activeElement).outlineStyle`), 'solid', `focus on ${order.at(-1)} is visible`);
    }
    // Previous and Next are disabled on a single page, so the order skips them.
    assert.deepEqual(order, ['42 Edit', '42 Delete', '137 Edit', '137 Delete', '201 Edit', '201 Delete']);
    for (let i = 0; i < 5; i++) await page.press('Shift+Tab');
    assert.equal(await focused(), '42 Edit');
    await page.press('Enter');
    await dialogOpen('edit-dialog');
    await page.press('Escape');
    await dialogClosed('edit-dialog');
    assert.equal(await page.evaluate(`document.activeElement.textContent + ' ' + document.activeElement.closest('tr').dataset.id`), 'Edit 42', 'focus returns to the row');
    await page.fill('#search', '');
    await waitForText('summary', /^\d+ books;/);
  });

  check('phone width: nothing scrolls sideways and every row keeps its buttons', async () => {
    await page.setViewport(360, 740);
    try {
      assert.ok(await page.evaluate<boolean>(`document.documentElement.scrollWidth <= 360`), 'no horizontal scrolling');
      assert.ok(await page.evaluate<boolean>(`[...document.querySelectorAll('#rows button')].every((b) => { const r = b.getBoundingClientRect(); return r.width > 0 && r.right <= 360; })`));
    } finally {
      await page.setViewport(DESKTOP.width, DESKTOP.height);
    }
  });

  check('phone 375×740: the whole Add form, its button included, is on the first screen', async () => {
    await page.setViewport(PHONE.width, PHONE.height);
    try {
      await page.evaluate('window.scrollTo(0, 0)');
      const bottom = await page.evaluate<number>(`document.querySelector('#add-form button[type=submit]').getBoundingClientRect().bottom`);
      assert.ok(bottom <= PHONE.height, `the Add book button ends ${Math.round(bottom)} px down, past the first screen (${PHONE.height} px)`);
    } finally {
      await page.setViewport(DESKTOP.width, DESKTOP.height);
    }
  });

  check('Save near the top of page 1: the row is highlighted and the notice in view (the README pictures are taken here)', async () => {
    await page.fill('#search', '');
    await page.press('Enter');
    await waitForText('page-info', 'Page 1 of 3');
    await page.evaluate('window.scrollTo(0, 0)');
    await clickRowButton(3, 'Edit');
    await dialogOpen('edit-dialog');
    await page.fill('#edit-title', 'The Left Hand of Darkness');
    await page.fill('#edit-author', 'Ursula K. Le Guin');
    await page.fill('#edit-year', '1969');
    await page.press('Enter');
    await dialogClosed('edit-dialog');
    await waitForText('notice', 'Saved “The Left Hand of Darkness”; it is highlighted on page 1.');
    await page.evaluate('window.scrollTo(0, 0)');
    assert.ok(await inView('#rows tr.highlight[data-id="3"]'));
    assert.ok(await inView('#notice'));
    if (process.env.UPDATE_UI_SCREENSHOT === '1') {
      await page.screenshot(fileURLToPath(DESKTOP_SCREENSHOT));
      await page.setViewport(PHONE.width, PHONE.height);
      try {
        await page.evaluate('window.scrollTo(0, 0)');
        await page.screenshot(fileURLToPath(PHONE_SCREENSHOT));
      } finally {
        await page.setViewport(DESKTOP.width, DESKTOP.height);
      }
    }
  });

  check('Sign out forgets the token: the catalogue is hidden and nothing is kept in cookies, storage or the URL', async () => {
    await page.click('#sign-out');
    await dialogOpen('signin-dialog');
    assert.equal(await page.evaluate(`getComputedStyle(document.getElementById('catalogue')).display`), 'none', 'nothing of the catalogue shows');
    assert.equal(await page.evaluate(`document.querySelectorAll('#rows tr').length`), 0);
    assert.deepEqual(await page.evaluate(`[document.cookie, localStorage.length, sessionStorage.length, location.href]`), ['', 0, 0, `${app.url}/`]);
    const cookies = await browser.connection.send<{ cookies: unknown[] }>('Storage.getCookies');
    assert.deepEqual(cookies.cookies, []);
  });

  check('no request went to another origin and the page logged no error', async () => {
    const origin = new URL(app.url).origin;
    const elsewhere = page.record.requests.filter((url) => url !== 'about:blank' && new URL(url).origin !== origin);
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(page.record.errors, []);
  });
});
