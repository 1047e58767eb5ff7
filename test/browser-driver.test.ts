import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { launchBrowser, type Browser } from './helpers/browser.ts';
import { CdpConnection, type CdpEvent } from './helpers/cdp-connection.ts';
import { findTool, needs } from './helpers/system-tools.ts';

/** A connection to a scripted peer: what the driver writes, and a way to answer as the browser. */
function fakeBrowser(): { connection: CdpConnection; written: () => Record<string, unknown>[]; reply: (bytes: Buffer | string) => void; end: () => void } {
  const toBrowser = new PassThrough();
  const fromBrowser = new PassThrough();
  let sent = '';
  toBrowser.on('data', (chunk: Buffer) => (sent += chunk.toString('utf8')));
  return {
    connection: new CdpConnection(toBrowser, fromBrowser),
    written: () => sent.split('\0').filter((s) => s !== '').map((s) => JSON.parse(s) as Record<string, unknown>),
    reply: (bytes) => fromBrowser.write(bytes),
    end: () => fromBrowser.end(),
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('CdpConnection (NUL-delimited JSON over a pipe)', () => {
  it('writes each command as JSON ended by NUL, with increasing ids and the session when given', async () => {
    const peer = fakeBrowser();
    void peer.connection.send('Browser.getVersion');
    void peer.connection.send('Runtime.evaluate', { expression: '1' }, 'S1');
    await tick();
    assert.deepEqual(peer.written(), [
      { id: 1, method: 'Browser.getVersion', params: {} },
      { id: 2, method: 'Runtime.evaluate', params: { expression: '1' }, sessionId: 'S1' },
    ]);
  });

  it('settles each command by its id, whatever the order of the answers', async () => {
    const peer = fakeBrowser();
    const first = peer.connection.send('A');
    const second = peer.connection.send('B');
    peer.reply('{"id":2,"result":{"b":2}}\0{"id":1,"result":{"a":1}}\0');
    assert.deepEqual(await second, { b: 2 });
    assert.deepEqual(await first, { a: 1 });
  });

  it('reassembles messages split anywhere, even inside a multi-byte character', async () => {
    const peer = fakeBrowser();
    const answer = peer.connection.send('Runtime.evaluate');
    const events: CdpEvent[] = [];
    peer.connection.on((e) => events.push(e));
    const bytes = Buffer.from('{"method":"Log.entryAdded","params":{"text":"é😀"},"sessionId":"S"}\0{"id":1,"result":{"value":"ü"}}\0', 'utf8');
    for (let i = 0; i < bytes.length; i++) peer.reply(bytes.subarray(i, i + 1));
    assert.deepEqual(await answer, { value: 'ü' });
    assert.deepEqual(events, [{ method: 'Log.entryAdded', params: { text: 'é😀' }, sessionId: 'S' }]);
  });

  it("rejects with the method and the browser's message when the command fails", async () => {
    const peer = fakeBrowser();
    const answer = peer.connection.send('Page.navigate');
    peer.reply('{"id":1,"error":{"code":-32000,"message":"Cannot navigate to invalid URL"}}\0');
    await assert.rejects(answer, /Page\.navigate: Cannot navigate to invalid URL/);
  });

  it('rejects every waiting command when the browser goes away, and every later one at once', async () => {
    const peer = fakeBrowser();
    const waiting = peer.connection.send('Page.captureScreenshot');
    peer.end();
    await assert.rejects(waiting, /Page\.captureScreenshot: the browser closed its end of the pipe/);
    await assert.rejects(peer.connection.send('Browser.close'), /Browser\.close: the browser closed/);
  });

  it('stops telling a listener once it unsubscribes', async () => {
    const peer = fakeBrowser();
    const seen: string[] = [];
    const off = peer.connection.on((e) => seen.push(e.method));
    peer.reply('{"method":"A","params":{}}\0');
    await tick();
    off();
    peer.reply('{"method":"B","params":{}}\0');
    await tick();
    assert.deepEqual(seen, ['A']);
  });
});

describe('launchBrowser with Debian chromium', needs('chromium'), () => {
  let browser: Browser;
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/echo') === true) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${req.method} ${req.url}`);
    } else if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>t</title><input id="field"><button id="b">go</button><script>document.getElementById("b").onclick=()=>{window.clicked=(window.clicked||0)+1};console.error("seen")</script>');
    } else {
      res.writeHead(404).end();
    }
  });
  let url = '';
  before(async () => {
    browser = await launchBrowser(findTool('chromium') as string);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    await browser?.close();
    server.close();
  });

  it('evaluates, types, clicks, presses keys and waits for a condition in a real page', async () => {
    const page = await browser.newPage();
    await page.goto(url);
    assert.equal(await page.evaluate('1 + 1'), 2);
    assert.equal(await page.evaluate('Promise.resolve("later")'), 'later');
    await page.fill('#field', 'typed é');
    assert.equal(await page.evaluate('document.getElementById("field").value'), 'typed é');
    await page.fill('#field', '');
    assert.equal(await page.evaluate('document.getElementById("field").value'), '');
    await page.click('#b');
    assert.equal(await page.waitFor('window.clicked'), 1);
    await page.fill('#field', 'x');
    await page.press('Tab');
    assert.equal(await page.evaluate('document.activeElement.id'), 'b');
    await page.press('Enter');
    assert.equal(await page.waitFor('window.clicked === 2 && window.clicked'), 2);
    assert.deepEqual(page.record.errors, ['console.error: seen']);
    assert.ok(page.record.requests.includes(url));
  });

  it("records each request's method, headers and body; holds matching requests until released; waits for a CDP event", async () => {
    const page = await browser.newPage();
    await page.goto(url);
    const held = await page.intercept('*/echo*', 1);
    void page.evaluate(`fetch('echo?n=1', { method: 'POST', headers: { 'x-test': 'yes' }, body: 'one' }).then((r) => r.text()).then((t) => { window.first = t; })`);
    const first = await held.next('the first /echo request');
    assert.equal(first.method, 'POST');
    assert.equal(await page.evaluate(`fetch('echo?n=2').then((r) => r.text())`), 'GET /echo?n=2', 'the second goes straight through');
    assert.equal(await page.evaluate('window.first === undefined'), true, 'the first is still held');
    const finished = page.waitForEvent<{ requestId: string }>('Network.loadingFinished', (p) => p.requestId === first.networkId, 'the first request to finish');
    assert.equal(await first.release(), true);
    await finished;
    assert.equal(await page.waitFor('window.first'), 'POST /echo?n=1');
    const sent = page.record.sent.find((r) => r.url.endsWith('/echo?n=1'));
    assert.deepEqual([sent?.method, sent?.headers['x-test'], sent?.body], ['POST', 'yes', 'one']);
    await held.stop();
    await assert.rejects(page.waitForEvent('Never.happens', () => true, 'an event that never comes', { timeoutMs: 50 }), /timed out after 50 ms waiting for: an event that never comes/);
    await assert.rejects(held.next('a request that never comes', { timeoutMs: 50 }), /timed out after 50 ms waiting for: a request that never comes/);
  });

  it('a page exception is thrown with its message; waitFor gives up after its timeout', async () => {
    const page = await browser.newPage();
    await page.goto(url);
    await assert.rejects(page.evaluate('null.x'), /TypeError/);
    await assert.rejects(page.waitFor('window.never', { timeoutMs: 100 }), /timed out after 100 ms waiting for: window\.never/);
  });

  it('close() ends the browser process and removes its profile directory', async () => {
    const own = await launchBrowser(findTool('chromium') as string);
    await own.close();
    assert.ok(own.process.exitCode !== null || own.process.signalCode !== null);
    await assert.rejects(access(own.userDataDir));
  });
});
