import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OPENAPI_DOCUMENT } from '../src/service/openapi-document.ts';
import { startApp, TEST_USER, type TestApp } from './helpers/app.ts';

describe('every 401 carries WWW-Authenticate (RFC 9110 §11.6.1)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('no token: a Bearer challenge, status and message unchanged', async () => {
    const res = await app.request('GET', '/books', { auth: false });
    assert.deepEqual(res.json, { status: 401, message: 'Authorization token required', data: null });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="book-catalogue"');
  });

  it('a refused token: the challenge says invalid_token (RFC 6750 §3.1)', async () => {
    for (const path of ['/books', '/book/1', '/book/abc']) {
      const res = await app.request('GET', path, { headers: { authorization: 'Bearer not.a.token' } });
      assert.deepEqual(res.json, { status: 401, message: 'Invalid token', data: null });
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="book-catalogue", error="invalid_token"');
    }
  });

  it('wrong credentials on POST /token: 401 Invalid credentials with a challenge', async () => {
    const res = await app.request('POST', '/token', { auth: false, body: { username: TEST_USER, password: 'wrong' } });
    assert.deepEqual(res.json, { status: 401, message: 'Invalid credentials', data: null });
    assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="book-catalogue"');
  });

  it('answers that are not 401 carry no challenge', async () => {
    const res = await app.request('GET', '/books');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('www-authenticate'), null);
  });

  it('the OpenAPI document declares the header on every 401', () => {
    let seen = 0;
    for (const item of Object.values(OPENAPI_DOCUMENT.paths)) {
      for (const operation of Object.values(item)) {
        const unauthorized = operation.responses['401'];
        if (unauthorized === undefined) continue;
        seen++;
        assert.ok(unauthorized.headers?.['WWW-Authenticate']?.required, operation.operationId);
      }
    }
    assert.ok(seen >= 8);
  });
});
