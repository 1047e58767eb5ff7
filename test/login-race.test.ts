import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, TEST_USER, type TestApp } from './helpers/app.ts';
import { openConnection, type RawConnection } from './helpers/raw.ts';

const MAX_FAILURES = 5;
const CLIENTS = 60;

/**
 * The headers of a wrong-password login, with `Expect: 100-continue`: the service answers
 * `100 Continue` only once the request has passed the throttle check and it is about to read the
 * body, so every connection here is known to be past that check before any body is sent.
 */
function loginHeaders(body: string): string {
  return (
    'POST /token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`
  );
}

describe('concurrent logins whose bodies arrive together', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ logLevel: 'silent', loginMaxFailures: MAX_FAILURES });
  });
  after(() => app.close());

  it(`get at most LOGIN_MAX_FAILURES (${MAX_FAILURES}) credential checks per window; the rest are 429`, { timeout: 30_000 }, async () => {
    const body = JSON.stringify({ username: TEST_USER, password: 'wrong' });
    const conns: RawConnection[] = await Promise.all(Array.from({ length: CLIENTS }, () => openConnection(app.port)));
    try {
      for (const conn of conns) conn.write(loginHeaders(body));
      const interim = await Promise.all(conns.map((conn) => conn.response()));
      assert.deepEqual(new Set(interim.map((r) => r.status)), new Set([100]), 'every login is past the first check');
      for (const conn of conns) conn.write(body);
      const answers = await Promise.all(conns.map((conn) => conn.response()));
      const statuses = answers.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 401).length, MAX_FAILURES, statuses.join(' '));
      assert.equal(statuses.filter((s) => s === 429).length, CLIENTS - MAX_FAILURES);
      for (const answer of answers.filter((r) => r.status === 429)) assert.ok(Number(answer.headers['retry-after']) >= 1);
    } finally {
      for (const conn of conns) conn.destroy();
    }
  });
});
