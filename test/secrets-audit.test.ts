import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain, type RunningService } from './helpers/process.ts';
import { rawRequestThenClose } from './helpers/raw.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { b64url, handSignedToken } from './helpers/token.ts';

/*
 * A whole session against the real binary at LOG_LEVEL=debug, with everything it prints on stdout
 * and stderr captured; then not one secret may appear in it (docs/contract.md, "Logging").
 */
const PASSWORD = 'audit-Pa55word-that-nobody-should-ever-see';
const SECRET = 'audit-signing-secret-0123456789abcdefghij';
const PREVIOUS = 'audit-previous-secret-0123456789abcdefghij';
const USER = 'auditor';
const FAIL_WRITES = new URL('./fixtures/fail-writes.mjs', import.meta.url).pathname;

/** A token signed here, with the previous secret: it exercises rotation through the real config. */
const PREVIOUS_TOKEN = handSignedToken({ claims: { sub: USER, exp: Math.floor(Date.now() / 1000) + 600 }, secret: PREVIOUS });

/** Records every status, and every credential and Authorization value sent or received. */
class Session {
  readonly statuses: number[] = [];
  /** The last status answered to each Authorization value. */
  readonly statusFor = new Map<string, number>();
  readonly sensitive = new Set<string>([PASSWORD, SECRET, PREVIOUS]);
  readonly #base: string;
  constructor(base: string) {
    this.#base = base;
  }

  async send(method: string, path: string, authorization?: string, body?: string): Promise<unknown> {
    if (authorization !== undefined) this.sensitive.add(authorization);
    const headers = { ...(authorization !== undefined && { authorization }), ...(body !== undefined && { 'content-type': 'application/json' }) };
    const res = await fetch(this.#base + path, { method, headers, ...(body !== undefined && { body }) });
    this.statuses.push(res.status);
    if (authorization !== undefined) this.statusFor.set(authorization, res.status);
    const text = await res.text();
    return text === '' ? undefined : (JSON.parse(text) as { data: unknown }).data;
  }

  login(username: string, password: string): Promise<unknown> {
    this.sensitive.add(password);
    return this.send('POST', '/token', undefined, JSON.stringify({ username, password }));
  }
}

/** Logins (failed, malformed, good), every endpoint and method, errors, then a store failure. */
async function runSession(session: Session, failWrites: (on: boolean) => Promise<void>): Promise<string> {
  await session.send('GET', '/healthz');
  await session.send('GET', '/openapi.json');
  await session.login(USER, 'wrong-password-1');
  await session.login(USER, PASSWORD.slice(0, -1));
  await session.login('root', PASSWORD);
  await session.send('POST', '/token', undefined, `{"username":"${USER}","password":"${PASSWORD}"`);
  const token = ((await session.login(USER, PASSWORD)) as { token: string }).token;
  session.sensitive.add(token).add(token.split('.')[2] as string);
  const bearer = `Bearer ${token}`;
  const requests: [string, string, string | undefined, string?][] = [
    ['GET', '/books', undefined],
    ['GET', '/books', bearer],
    ['HEAD', '/books', token],
    ['OPTIONS', '/books', token],
    ['POST', '/book', token, JSON.stringify({ title: 'Audit', author: 'Log', year: 2024 })],
    ['POST', '/book', bearer, '{"title": 1}'],
    ['GET', '/book/1', bearer],
    ['GET', '/book/abc', bearer],
    ['GET', '/book/999', bearer],
    ['PUT', '/book/1', bearer, JSON.stringify({ year: 2025 })],
    ['PUT', '/book/1', bearer, '[]'],
    ['PUT', '/book/999', bearer, '{}'],
    ['PATCH', '/book/1', bearer],
    ['GET', '/nowhere', bearer],
    ['GET', '/books', `${token.slice(0, -2)}AA`],
    ['GET', '/books', `Bearer ${token}.extra`],
    ['GET', '/books', `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`],
    ['GET', '/books', PREVIOUS_TOKEN],
  ];
  for (const [method, path, authorization, body] of requests) await session.send(method, path, authorization, body);
  await failWrites(true);
  await session.send('POST', '/book', bearer, JSON.stringify({ title: 'Lost', author: 'Disk', year: 1 }));
  await failWrites(false);
  await session.send('POST', '/book', bearer, JSON.stringify({ title: 'Kept', author: 'Disk', year: 2 }));
  await session.send('DELETE', '/book/1', bearer);
  await session.send('DELETE', '/book/1', bearer);
  return token;
}

describe('secrets audit: a full session at LOG_LEVEL=debug prints no secret', () => {
  const temp = tempDirs('book-catalogue-audit-');
  let dir: string;
  let main: RunningService | undefined;
  let output = '';
  let session: Session;

  before(async () => {
    dir = await temp.make();
    const marker = join(dir, 'fail-writes');
    main = await startMain({
      args: ['--port', '0', '--host', '127.0.0.1', '--data-dir', join(dir, 'data')],
      cwd: dir,
      env: {
        NODE_OPTIONS: `--import ${FAIL_WRITES}`,
        LOG_LEVEL: 'debug',
        AUTH_USERNAME: USER,
        AUTH_PASSWORD: PASSWORD,
        SECRET_TOKEN: SECRET,
        SECRET_TOKEN_PREVIOUS: PREVIOUS,
        FAIL_WRITES_MARKER: marker,
      },
    });
    session = new Session(main.url);
    const token = await runSession(session, (on) => (on ? writeFile(marker, '') : rm(marker)));
    // Raw: the server answers these before reading the rest, which fetch may see as a reset.
    for (const request of [
      `POST /book HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\nContent-Length: 70000\r\n\r\n`,
      `GET /books HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`,
      `GET /books HTTP/9\r\nAuthorization: ${token}\r\n\r\n`,
    ]) {
      session.statuses.push((await rawRequestThenClose(main.port, request)).status);
    }
    const exit = await main.stop();
    assert.equal(exit.code, 0);
    output = exit.stdout + exit.stderr;
  });
  after(async () => {
    await main?.stop();
    await temp.removeAll();
  });

  it('the session went through every kind of answer, 500 included', () => {
    assert.deepEqual(
      [...new Set(session.statuses)].sort((a, b) => a - b),
      [200, 201, 400, 401, 404, 405, 413, 431, 500],
    );
    assert.equal(session.statusFor.get(PREVIOUS_TOKEN), 200, 'SECRET_TOKEN_PREVIOUS reached the running service');
  });

  it('the debug log is not empty: requests, token rejections and the store failure are in it', () => {
    assert.match(output, /"msg":"request"/);
    assert.match(output, /"msg":"token rejected"/);
    assert.match(output, /EIO/);
    assert.ok(output.split('\n').length > session.statuses.length, `${output.split('\n').length} lines`);
  });

  it('no password, secret, token or Authorization value appears on stdout or stderr', () => {
    const encodings = (value: string): string[] => [value, b64url(value), Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')];
    const leaks = [...session.sensitive].flatMap(encodings).filter((value) => output.includes(value));
    assert.deepEqual(leaks, []);
  });
});
