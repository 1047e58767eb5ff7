import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startMain, type RunningService } from './helpers/process.ts';
import { rawRequestThenClose } from './helpers/raw.ts';

/*
 * A whole session against the real binary at LOG_LEVEL=debug, with everything it prints on stdout
 * and stderr captured; then not one secret may appear in it (decisions.md, "Operations").
 */
const PASSWORD = 'audit-Pa55word-that-nobody-should-ever-see';
const SECRET = 'audit-signing-secret-0123456789abcdefghij';
const PREVIOUS = 'audit-previous-secret-0123456789abcdefghij';
const USER = 'auditor';
const FAIL_WRITES = new URL('./fixtures/fail-writes.mjs', import.meta.url).pathname;

const b64 = (text: string): string => Buffer.from(text).toString('base64url');

/** A token signed here, with the previous secret: it exercises rotation through the real config. */
function previousSecretToken(): string {
  const input = `${b64('{"alg":"HS256","typ":"JWT"}')}.${b64(JSON.stringify({ sub: USER, exp: Math.floor(Date.now() / 1000) + 600 }))}`;
  return `${input}.${createHmac('sha256', PREVIOUS).update(input).digest('base64url')}`;
}

describe('secrets audit: a full session at LOG_LEVEL=debug prints no secret', () => {
  let dir: string;
  let main: RunningService | undefined;
  let output = '';
  const statuses: number[] = [];
  /** Every Authorization value and credential the session sent or received. */
  const sensitive = new Set<string>([PASSWORD, SECRET, PREVIOUS]);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'book-catalogue-audit-'));
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
    const base = main.url;
    const send = async (method: string, path: string, authorization?: string, body?: string): Promise<unknown> => {
      if (authorization !== undefined) sensitive.add(authorization);
      const res = await fetch(base + path, { method, ...(authorization !== undefined && { headers: { authorization } }), ...(body !== undefined && { body }) });
      statuses.push(res.status);
      return ((await res.json()) as { data: unknown }).data;
    };
    const login = (username: string, password: string): Promise<unknown> => {
      sensitive.add(password);
      return send('POST', '/token', undefined, JSON.stringify({ username, password }));
    };

    await send('GET', '/healthz');
    await login(USER, 'wrong-password-1');
    await login(USER, PASSWORD.slice(0, -1));
    await login('root', PASSWORD);
    await send('POST', '/token', undefined, `{"username":"${USER}","password":"${PASSWORD}"`);
    const token = ((await login(USER, PASSWORD)) as { token: string }).token;
    sensitive.add(token);
    sensitive.add(token.split('.')[2] as string);
    const bearer = `Bearer ${token}`;
    await send('GET', '/books');
    await send('GET', '/books', bearer);
    await send('POST', '/book', token, JSON.stringify({ title: 'Audit', author: 'Log', year: 2024 }));
    await send('POST', '/book', bearer, '{"title": 1}');
    await send('GET', '/book/1', bearer);
    await send('GET', '/book/abc', bearer);
    await send('GET', '/book/999', bearer);
    await send('PUT', '/book/1', bearer, JSON.stringify({ year: 2025 }));
    await send('PUT', '/book/1', bearer, '[]');
    await send('PUT', '/book/999', bearer, '{}');
    await send('PATCH', '/book/1', bearer);
    await send('GET', '/nowhere', bearer);
    await send('GET', '/books', `${token.slice(0, -2)}AA`);
    await send('GET', '/books', `Bearer ${token}.extra`);
    await send('GET', '/books', `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`);
    await send('GET', '/books', previousSecretToken());
    await writeFile(marker, '');
    await send('POST', '/book', bearer, JSON.stringify({ title: 'Lost', author: 'Disk', year: 1 }));
    await rm(marker);
    await send('POST', '/book', bearer, JSON.stringify({ title: 'Kept', author: 'Disk', year: 2 }));
    await send('DELETE', '/book/1', bearer);
    await send('DELETE', '/book/1', bearer);
    // Raw: the server answers these before reading the rest, which fetch may see as a reset.
    statuses.push((await rawRequestThenClose(main.port, `POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Length: 70000\r\n\r\n`)).status);
    statuses.push((await rawRequestThenClose(main.port, `GET /books HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`)).status);
    statuses.push((await rawRequestThenClose(main.port, `GET /books HTTP/9\r\nAuthorization: ${token}\r\n\r\n`)).status);
    const exit = await main.stop();
    assert.equal(exit.code, 0);
    output = exit.stdout + exit.stderr;
  });
  after(async () => {
    await main?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('the session went through every kind of answer, 500 included', () => {
    assert.deepEqual(
      [...new Set(statuses)].sort((a, b) => a - b),
      [200, 201, 400, 401, 404, 405, 413, 431, 500],
    );
    assert.ok(statuses.filter((s) => s === 200).length >= 6, 'the previous-secret token was accepted among others');
  });

  it('the debug log is not empty: requests, token rejections and the store failure are in it', () => {
    assert.match(output, /"msg":"request"/);
    assert.match(output, /"msg":"token rejected"/);
    assert.match(output, /EIO/);
    assert.ok(output.split('\n').length > statuses.length, `${output.split('\n').length} lines`);
  });

  it('no password, secret, token or Authorization value appears on stdout or stderr', () => {
    const encodings = (value: string): string[] => [value, b64(value), Buffer.from(value).toString('base64'), Buffer.from(value).toString('hex')];
    const leaks = [...sensitive].flatMap(encodings).filter((value) => output.includes(value));
    assert.deepEqual(leaks, []);
  });
});
