import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_PASSWORD, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';

interface LogLine {
  level: number;
  time: number;
  pid: number;
  hostname: string;
  msg: string;
  reqId?: string;
  method?: string;
  path?: string;
  statusCode?: number;
  responseTime?: number;
}

const parse = (lines: string[]): LogLine[] => lines.map((l) => JSON.parse(l) as LogLine);

describe('GET /healthz (docs/contract.md, "Operations endpoints")', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('200 OK with data {"status":"ok"}, without a token', async () => {
    const res = await app.request('GET', '/healthz', { auth: false });
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"status":200,"message":"OK","data":{"status":"ok"}}');
  });

  it('is public: an invalid Authorization header does not matter', async () => {
    assert.equal((await app.request('GET', '/healthz', { headers: { authorization: 'garbage' } })).status, 200);
  });
});

describe('request log (docs/contract.md, "Logging"; pino field names)', () => {
  let app: TestApp;
  before(async () => {
    // debug: the most the service ever logs, so "never" covers every level.
    app = await startApp({ logLevel: 'debug' });
  });
  after(() => app.close());

  it('one JSON line per request with level, time, pid, hostname, reqId, method, path, statusCode, responseTime', async () => {
    const ids = ['r-1', 'r-2', 'r-3', 'r-4'];
    await app.request('GET', '/books', { headers: { 'x-request-id': 'r-1' } });
    await app.request('POST', '/book', { body: { title: 't', author: 'a', year: 1 }, headers: { 'x-request-id': 'r-2' } });
    await app.request('GET', '/nope?q=1', { headers: { 'x-request-id': 'r-3' } });
    await app.request('GET', '/book/1', { auth: false, headers: { 'x-request-id': 'r-4' } });
    const lines = parse(app.logs).filter((l) => l.msg === 'request' && ids.includes(l.reqId ?? ''));
    assert.deepEqual(
      lines.map((l) => [l.reqId, l.method, l.path, l.statusCode]),
      [
        ['r-1', 'GET', '/books', 200],
        ['r-2', 'POST', '/book', 201],
        ['r-3', 'GET', '/nope', 404],
        ['r-4', 'GET', '/book/1', 401],
      ],
    );
    for (const line of lines) {
      assert.equal(line.level, 30);
      assert.equal(typeof line.time, 'number');
      assert.equal(line.pid, process.pid);
      assert.equal(typeof line.hostname, 'string');
      assert.equal(typeof line.responseTime, 'number');
    }
  });

  it('every log entry is exactly one line of JSON', () => {
    for (const line of app.logs) {
      assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, line);
      JSON.parse(line);
    }
  });

  it('never logs the Authorization header, a token, the password or a request body', async () => {
    const before = app.logs.length;
    const marker = 'BODY-MARKER-7f3a';
    const login = await app.request('POST', '/token', { body: { username: TEST_USER, password: TEST_PASSWORD }, auth: false });
    const issued = (login.json.data as { token: string }).token;
    await app.request('POST', '/token', { body: { username: TEST_USER, password: `${TEST_PASSWORD}-wrong` }, auth: false });
    await app.request('POST', '/token', { rawBody: `{"password":"${TEST_PASSWORD}",`, auth: false });
    await app.request('POST', '/book', { body: { title: marker, author: marker, year: 1 }, headers: { authorization: `Bearer ${issued}` } });
    await app.request('POST', '/book', { rawBody: `{"title":"${marker}"`, headers: { authorization: issued } });
    const bad = `${issued.slice(0, -4)}AAAA`;
    await app.request('GET', '/books', { headers: { authorization: bad } });
    await app.request('GET', '/books', { headers: { authorization: 'Bearer not-a-token-SECRETISH' } });
    await app.request('GET', `/books?password=${TEST_PASSWORD}&token=${issued}`);
    const written = app.logs.slice(before).join('');
    assert.ok(written.length > 0);
    for (const secret of [TEST_PASSWORD, issued, issued.split('.')[2] as string, bad, 'not-a-token-SECRETISH', marker, TEST_SECRET]) {
      assert.ok(!written.includes(secret), `log contains ${secret.slice(0, 20)}…`);
    }
    assert.ok(!/authorization/i.test(written), 'no authorization field');
  });

  it('at level warn, no request lines are written', async () => {
    const quiet = await startApp({ logLevel: 'warn' });
    try {
      await quiet.request('GET', '/books');
      assert.equal(parse(quiet.logs).filter((l) => l.msg === 'request').length, 0);
    } finally {
      await quiet.close();
    }
  });
});
