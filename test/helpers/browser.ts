import { spawn, type ChildProcess } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import { CdpConnection, type CdpEvent } from './cdp-connection.ts';
import { tempDir } from './temp-dirs.ts';

/** Flags for a quiet, headless, throwaway browser that talks to nothing but the pages it is sent to. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--remote-debugging-pipe',
] as const;

const CLOSE_GRACE_MS = 5000;

export interface Browser {
  readonly connection: CdpConnection;
  /** The profile directory (removed by close). */
  readonly userDataDir: string;
  readonly process: ChildProcess;
  newPage(): Promise<Page>;
  /** Asks the browser to close, kills it if it does not within 5 s, removes its profile. */
  close(): Promise<void>;
}

/** Starts `executable` (Debian's chromium) with a fresh profile, driven over fds 3 and 4. */
export async function launchBrowser(executable: string): Promise<Browser> {
  const userDataDir = await tempDir('book-catalogue-chromium-');
  const child = spawn(executable, [...CHROMIUM_FLAGS, `--user-data-dir=${userDataDir}`, 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    if (stderr.length < 64 * 1024) stderr += s;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const connection = new CdpConnection(child.stdio[3] as Writable, child.stdio[4] as Readable);
  child.once('exit', (code, signal) => connection.close(`the browser exited (${signal ?? code}): ${stderr.slice(-2000)}`));
  child.once('error', (err) => connection.close(`the browser could not be started: ${err.message}`));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
      await connection.send('Browser.close').catch(() => child.kill('SIGKILL'));
      await exited;
      clearTimeout(timer);
    }
    await rm(userDataDir, { recursive: true, force: true });
  };
  try {
    await connection.send('Browser.getVersion');
  } catch (err) {
    await close();
    throw err;
  }
  return { connection, userDataDir, process: child, newPage: () => openPage(connection), close };
}

/** A request as the page sent it (Network.requestWillBeSent). */
export interface SentRequest {
  readonly requestId: string;
  readonly method: string;
  readonly url: string;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | undefined;
}

/** What a page did: every request's URL, and every error it reported. */
export interface PageRecord {
  readonly requests: string[];
  /** Every request with its method, headers and body, in the order sent. */
  readonly sent: SentRequest[];
  /** Exceptions, console.error/assert calls and browser log errors (CSP violations among them). */
  readonly errors: string[];
  /** Browser log lines about HTTP statuses (a 401 the test provoked); kept apart from `errors`. */
  readonly networkLog: string[];
  /** Bytes received (headers and bodies) per request id, when each finished loading. */
  readonly transferred: Map<string, number>;
}

export interface WaitOptions {
  timeoutMs?: number;
}

/** A request held before it leaves the browser (the Fetch domain), until released. */
export interface HeldRequest {
  readonly url: string;
  readonly method: string;
  /** Its Network.requestWillBeSent id. */
  readonly networkId: string;
  /** Sends it on; resolves false when the page gave it up meanwhile (aborted it). */
  release(): Promise<boolean>;
}

export interface Interception {
  /** The next request held (the oldest not yet taken); rejects after the timeout naming `what`. */
  next(what: string, options?: WaitOptions): Promise<HeldRequest>;
  /** Stops holding: requests sent from now on go straight through. */
  stop(): Promise<void>;
}

export interface Page {
  readonly sessionId: string;
  readonly record: PageRecord;
  goto(url: string): Promise<void>;
  /** Evaluates an expression (awaiting a promise) in the page; its value as JSON. Throws on an exception. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** Resolves with the expression's value once it is truthy, polled in the page; rejects after the timeout (default 10 s). */
  waitFor<T = unknown>(expression: string, options?: WaitOptions): Promise<T>;
  /** A real mouse click at the middle of the first element the selector matches. */
  click(selector: string): Promise<void>;
  /** Focuses the element, selects what it holds and types `text` over it (input events fire as for a person). */
  fill(selector: string, text: string): Promise<void>;
  /** A key press: Enter, Escape, Tab, Shift+Tab, Backspace. */
  press(key: KeyName): Promise<void>;
  setViewport(width: number, height: number): Promise<void>;
  screenshot(path: string): Promise<void>;
  /**
   * Resolves with the params of the next CDP event `method` of this page that `matches`; rejects
   * after the timeout (default 10 s) with a message naming `what`.
   */
  waitForEvent<T = Record<string, unknown>>(method: string, matches: (params: T) => boolean, what: string, options?: WaitOptions): Promise<T>;
  /**
   * Holds the first `hold` requests whose URL matches `urlPattern` (CDP wildcards: `*`, `?`)
   * until the test releases them; later ones go straight through.
   */
  intercept(urlPattern: string, hold?: number): Promise<Interception>;
}

export type KeyName = 'Enter' | 'Escape' | 'Tab' | 'Shift+Tab' | 'Backspace';

const KEYS: Record<KeyName, { key: string; code: string; keyCode: number; text?: string; shift?: boolean }> = {
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  Escape: { key: 'Escape', code: 'Escape', keyCode: 27 },
  Tab: { key: 'Tab', code: 'Tab', keyCode: 9 },
  'Shift+Tab': { key: 'Tab', code: 'Tab', keyCode: 9, shift: true },
  Backspace: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
};

function describeException(details: Record<string, unknown>): string {
  const exception = details.exception as { description?: string; value?: unknown } | undefined;
  return exception?.description ?? String(exception?.value ?? details.text ?? 'exception');
}

async function openPage(connection: CdpConnection): Promise<Page> {
  const { targetId } = await connection.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await connection.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
  const send = <T = Record<string, unknown>>(method: string, params: Record<string, unknown> = {}): Promise<T> => connection.send<T>(method, params, sessionId);
  const record: PageRecord = { requests: [], sent: [], errors: [], networkLog: [], transferred: new Map() };
  let loaded: (() => void) | undefined;
  connection.on((event: CdpEvent) => {
    if (event.sessionId !== sessionId) return;
    const p = event.params;
    switch (event.method) {
      case 'Network.requestWillBeSent': {
        const request = p.request as { url: string; method: string; headers: Record<string, string>; postData?: string };
        record.requests.push(request.url);
        const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
        record.sent.push({ requestId: p.requestId as string, method: request.method, url: request.url, headers, body: request.postData });
        break;
      }
      case 'Network.loadingFinished':
        record.transferred.set(p.requestId as string, p.encodedDataLength as number);
        break;
      case 'Runtime.exceptionThrown':
        record.errors.push(`exception: ${describeException(p.exceptionDetails as Record<string, unknown>)}`);
        break;
      case 'Runtime.consoleAPICalled':
        if (p.type === 'error' || p.type === 'assert') {
          const args = (p.args as { value?: unknown; description?: string }[]).map((a) => a.description ?? String(a.value));
          record.errors.push(`console.${String(p.type)}: ${args.join(' ')}`);
        }
        break;
      case 'Log.entryAdded': {
        const entry = p.entry as { level: string; source: string; text: string; url?: string };
        if (entry.level !== 'error') break;
        if (entry.source === 'network') record.networkLog.push(`${entry.text} ${entry.url ?? ''}`);
        else record.errors.push(`${entry.source}: ${entry.text}`);
        break;
      }
      case 'Page.loadEventFired':
        loaded?.();
        break;
    }
  });
  await Promise.all([send('Page.enable'), send('Runtime.enable'), send('Network.enable'), send('Log.enable')]);

  const evaluate = async <T>(expression: string): Promise<T> => {
    const answer = await send<{ result: { value?: unknown }; exceptionDetails?: Record<string, unknown> }>('Runtime.evaluate', {
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    if (answer.exceptionDetails !== undefined) throw new Error(`${describeException(answer.exceptionDetails)}\n  while evaluating: ${expression}`);
    return answer.result.value as T;
  };

  const key = async (name: KeyName): Promise<void> => {
    const k = KEYS[name];
    const common = { key: k.key, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: k.shift === true ? 8 : 0 };
    await send('Input.dispatchKeyEvent', { type: 'keyDown', ...common, ...(k.text !== undefined && { text: k.text }) });
    await send('Input.dispatchKeyEvent', { type: 'keyUp', ...common });
  };

  return {
    sessionId,
    record,
    async goto(url) {
      const done = new Promise<void>((resolve) => (loaded = resolve));
      const answer = await send<{ errorText?: string }>('Page.navigate', { url });
      if (answer.errorText !== undefined) throw new Error(`navigation to ${url} failed: ${answer.errorText}`);
      await done;
    },
    evaluate,
    async waitFor<T>(expression: string, options: WaitOptions = {}): Promise<T> {
      const timeoutMs = options.timeoutMs ?? 10_000;
      // Polled inside the page, on its own timers: the test never sleeps, it waits for the condition.
      const poll = `new Promise((resolve, reject) => {
        const deadline = performance.now() + ${timeoutMs};
        const check = () => {
          let value;
          try { value = (${expression}); } catch (err) { value = undefined; }
          if (value) resolve(value);
          else if (performance.now() > deadline) reject(new Error('timed out after ${timeoutMs} ms waiting for: ' + ${JSON.stringify(expression)}));
          else setTimeout(check, 20);
        };
        check();
      })`;
      return evaluate<T>(poll);
    },
    async click(selector) {
      const box = await evaluate<{ x: number; y: number } | null>(`(() => {
        const el = document.querySelector(${JSON.stringify(selector)});
        if (el === null) return null;
        el.scrollIntoView({ block: 'center' });
        const r = el.getBoundingClientRect();
        return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      })()`);
      if (box === null) throw new Error(`click: nothing matches ${selector}`);
      for (const type of ['mousePressed', 'mouseReleased']) {
        await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 });
      }
    },
    async fill(selector, text) {
      const found = await evaluate<boolean>(`(() => {
        const el = document.querySelector(${JSON.stringify(selector)});
        if (el === null) return false;
        el.focus();
        el.select();
        return true;
      })()`);
      if (!found) throw new Error(`fill: nothing matches ${selector}`);
      if (text === '') await key('Backspace');
      else await send('Input.insertText', { text });
    },
    press: key,
    async setViewport(width, height) {
      await send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: width < 600 });
    },
    async screenshot(path) {
      const { data } = await send<{ data: string }>('Page.captureScreenshot', { format: 'png' });
      await writeFile(path, Buffer.from(data, 'base64'));
    },
    waitForEvent: (method, matches, what, options) => nextEvent(connection, sessionId, method, matches, what, options?.timeoutMs),
    async intercept(urlPattern, hold = Number.POSITIVE_INFINITY) {
      const held: HeldRequest[] = [];
      const waiting: ((request: HeldRequest) => void)[] = [];
      let seen = 0;
      const off = connection.on((event) => {
        if (event.sessionId !== sessionId || event.method !== 'Fetch.requestPaused') return;
        const p = event.params as { requestId: string; networkId: string; request: { url: string; method: string } };
        const pass = (): Promise<boolean> => send('Fetch.continueRequest', { requestId: p.requestId }).then(() => true, () => false);
        if (++seen > hold) {
          void pass();
          return;
        }
        const request: HeldRequest = { url: p.request.url, method: p.request.method, networkId: p.networkId, release: pass };
        const taker = waiting.shift();
        if (taker === undefined) held.push(request);
        else taker(request);
      });
      await send('Fetch.enable', { patterns: [{ urlPattern, requestStage: 'Request' }] });
      return {
        next(what, options = {}) {
          const ready = held.shift();
          if (ready !== undefined) return Promise.resolve(ready);
          const timeoutMs = options.timeoutMs ?? 10_000;
          return new Promise((resolve, reject) => {
            const timer = setTimeout(() => {
              waiting.splice(waiting.indexOf(taker), 1);
              reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`));
            }, timeoutMs);
            const taker = (request: HeldRequest): void => {
              clearTimeout(timer);
              resolve(request);
            };
            waiting.push(taker);
          });
        },
        async stop() {
          off();
          await Promise.all(held.splice(0).map((request) => request.release()));
          await send('Fetch.disable');
        },
      };
    },
  };
}

function nextEvent<T>(connection: CdpConnection, sessionId: string, method: string, matches: (params: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`));
    }, timeoutMs);
    const off = connection.on((event) => {
      if (event.sessionId !== sessionId || event.method !== method || !matches(event.params as T)) return;
      clearTimeout(timer);
      off();
      resolve(event.params as T);
    });
  });
}
