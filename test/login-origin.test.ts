import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { SERVICE_WIDE_FACTOR, withServiceWideBound } from '../src/auth/service-wide-throttle.ts';
import { createLoginThrottle, THROTTLE_WINDOW_MS } from '../src/auth/throttle.ts';
import { isJsonMediaType } from '../src/http/media-type.ts';
import { startApp, TEST_PASSWORD, TEST_USER, type TestApp } from './helpers/app.ts';
import { rawRequest } from './helpers/raw.ts';

const GOOD = JSON.stringify({ username: TEST_USER, password: TEST_PASSWORD });
const WRONG = JSON.stringify({ username: TEST_USER, password: 'guess' });

describe('POST /token takes only a JSON media type, so no page on another origin can log in without a preflight', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp({ loginMaxFailures: 3 });
  });
  after(() => app.close());

  it('isJsonMediaType: application/json and +json, any case, parameters ignored; nothing else', () => {
    for (const type of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', ' application/json\t;x=y', 'application/problem+json', 'application/vnd.api+json']) {
      assert.equal(isJsonMediaType(type), true, type);
    }
    for (const type of [undefined, '', 'text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/+json', 'json', '/json', 'application/json/x', '\u00a0application/json']) {
      assert.equal(isJsonMediaType(type), false, String(type));
    }
  });

  for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    it(`a CORS-safelisted type (${type}) is 400 Invalid request payload, even with the right pair, and is not counted`, async () => {
      for (let i = 0; i < 5; i++) {
        const res = await app.request('POST', '/token', { auth: false, rawBody: i % 2 === 0 ? WRONG : GOOD, headers: { 'content-type': type } });
        assert.deepEqual(res.json, { status: 400, message: 'Invalid request payload', data: null });
      }
      const real = await app.request('POST', '/token', { auth: false, rawBody: GOOD, headers: { 'content-type': 'application/json' } });
      assert.equal(real.status, 200, 'the real user is not locked out');
    });
  }

  it('no Content-Type at all is 400 too; application/json and +json types log in', async () => {
    const none = await rawRequest(app.port, `POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: ${GOOD.length}\r\n\r\n${GOOD}`);
    assert.deepEqual(none.json, { status: 400, message: 'Invalid request payload', data: null });
    for (const type of ['application/json; charset=utf-8', 'application/vnd.login+json']) {
      const res = await app.request('POST', '/token', { auth: false, rawBody: GOOD, headers: { 'content-type': type } });
      assert.equal(res.status, 200, type);
    }
  });
});

describe('a service-wide bound on failed logins beside the per-address one', () => {
  it('guesses spread over many addresses stop every login for the rest of the window', () => {
    let now = 5_000;
    const max = 3;
    const throttle = withServiceWideBound(createLoginThrottle(max, () => now), max * SERVICE_WIDE_FACTOR, () => now);
    const total = max * SERVICE_WIDE_FACTOR;
    for (let i = 0; i < total; i++) {
      const address = `2001:db8::${i.toString(16)}`;
      assert.equal(throttle.retryAfter(address), 0, `guess ${i} is allowed`);
      throttle.recordFailure(address);
    }
    assert.equal(throttle.retryAfter('2001:db8::ffff'), THROTTLE_WINDOW_MS / 1000, 'a fresh address waits too');
    now += THROTTLE_WINDOW_MS - 1_000;
    assert.equal(throttle.retryAfter('192.0.2.1'), 1);
    now += 1_000;
    assert.equal(throttle.retryAfter('192.0.2.1'), 0, 'the window ended');
    throttle.recordFailure('192.0.2.1');
    assert.equal(throttle.retryAfter('192.0.2.2'), 0, 'a new window starts with one failure');
  });

  it('the per-address bound still applies first, and 0 disables both', () => {
    const now = (): number => 0;
    const throttle = withServiceWideBound(createLoginThrottle(2, now), 2 * SERVICE_WIDE_FACTOR, now);
    throttle.recordFailure('a');
    throttle.recordFailure('a');
    assert.ok(throttle.retryAfter('a') > 0);
    assert.equal(throttle.retryAfter('b'), 0);
    const off = withServiceWideBound(createLoginThrottle(0, now), 0, now);
    for (let i = 0; i < 1000; i++) off.recordFailure(`x${i}`);
    assert.equal(off.retryAfter('y'), 0);
  });

  it('over HTTP: guesses from many loopback addresses, then the right pair from a clean one gets 429 with Retry-After', async () => {
    const app = await startApp({ loginMaxFailures: 2 });
    try {
      const login = (from: string, password: string): Promise<{ status: number; retryAfter: string | undefined }> =>
        new Promise((resolve, reject) => {
          const body = JSON.stringify({ username: TEST_USER, password });
          const req = request(
            { host: '127.0.0.1', port: app.port, localAddress: from, method: 'POST', path: '/token', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
            (res) => {
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode as number, retryAfter: res.headers['retry-after'] }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      // All of 127.0.0.0/8 is loopback: each address stays under its own bound of 2.
      for (let i = 0; i < 2 * SERVICE_WIDE_FACTOR; i++) {
        const res = await login(`127.0.0.${10 + Math.floor(i / 2)}`, 'guess');
        assert.equal(res.status, 401, `guess ${i}`);
      }
      const real = await login('127.0.0.2', TEST_PASSWORD);
      assert.equal(real.status, 429);
      assert.ok(Number(real.retryAfter) > 0);
    } finally {
      await app.close();
    }
  });
});
