import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MESSAGES } from '../src/index.ts';
import { OPENAPI_DOCUMENT } from '../src/http/openapi.ts';
import { OPERATION_METHODS, type Operation, type Response, type Schema } from '../src/http/openapi-types.ts';
import { startApp, type TestApp } from './helpers/app.ts';

/** Every (METHOD, path, operation) the document describes. */
function operations(): { method: string; path: string; operation: Operation }[] {
  const found: { method: string; path: string; operation: Operation }[] = [];
  for (const [path, item] of Object.entries(OPENAPI_DOCUMENT.paths)) {
    for (const method of OPERATION_METHODS) {
      const operation = item[method];
      if (operation !== undefined) found.push({ method: method.toUpperCase(), path, operation });
    }
  }
  return found;
}

function allResponses(): [string, Response][] {
  const fromOperations = operations().flatMap(({ operation }) => Object.entries(operation.responses));
  return [...fromOperations, ...Object.entries(OPENAPI_DOCUMENT.components.responses)];
}

function envelopeSchema(response: Response): Schema | undefined {
  return response.content?.['application/json']?.schema;
}

describe('OpenAPI 3.1 document', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('GET /openapi.json is public and serves the document itself, not an envelope', async () => {
    const res = await app.request('GET', '/openapi.json', { auth: false });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.deepEqual(JSON.parse(res.text), JSON.parse(JSON.stringify(OPENAPI_DOCUMENT)));
    assert.equal((JSON.parse(res.text) as { openapi: string }).openapi, '3.1.0');
  });

  it("its (path, method) set equals the router's", () => {
    const documented = operations().map(({ method, path }) => `${method} ${path}`).sort();
    const routed = app.server.app.routes().flatMap(({ pattern, methods }) => methods.map((m) => `${m} ${pattern}`)).sort();
    assert.deepEqual(documented, routed);
  });

  it('every message the service can send appears as an envelope message', () => {
    const documented = new Set<string>();
    for (const [, response] of allResponses()) {
      const message = envelopeSchema(response)?.properties?.message;
      if (message?.const !== undefined) documented.add(String(message.const));
      for (const m of message?.enum ?? []) documented.add(m);
    }
    const missing = Object.values(MESSAGES).filter((m) => !documented.has(m));
    assert.deepEqual(missing, []);
  });

  it("each operation's envelope responses declare the status of their own key", () => {
    for (const { operation } of operations()) {
      for (const [key, response] of Object.entries(operation.responses)) {
        const status = envelopeSchema(response)?.properties?.status?.const;
        if (status !== undefined) assert.equal(String(status), key);
      }
    }
  });

  it('operations marked public answer without a token and the others answer 401 (both token forms declared)', async () => {
    for (const { method, path, operation } of operations()) {
      const res = await app.request(method, path.replace('{id}', '1'), { auth: false, ...(method === 'POST' || method === 'PUT' ? { body: {} } : {}) });
      if (operation.security.length === 0) {
        assert.notEqual(res.status, 401, `${method} ${path} is public`);
      } else {
        assert.equal(res.status, 401, `${method} ${path} is protected`);
        assert.deepEqual(operation.security, [{ rawToken: [] }, { bearer: [] }]);
      }
    }
    const schemes = OPENAPI_DOCUMENT.components.securitySchemes;
    assert.deepEqual([schemes.rawToken?.type, schemes.rawToken?.name, schemes.bearer?.scheme], ['apiKey', 'Authorization', 'bearer']);
  });

  it('documents ETag on book answers, If-Match on PUT and DELETE, Retry-After on 429 and Allow on 405', () => {
    const book = OPENAPI_DOCUMENT.paths['/book/{id}'];
    assert.ok(book?.get?.responses['200']?.headers?.ETag);
    assert.ok(book.put?.responses['200']?.headers?.ETag);
    assert.ok(OPENAPI_DOCUMENT.paths['/book']?.post?.responses['201']?.headers?.ETag);
    for (const op of [book.put, book.delete]) assert.ok(op?.parameters?.some((p) => p.name === 'If-Match' && p.in === 'header'));
    assert.ok(OPENAPI_DOCUMENT.paths['/token']?.post?.responses['429']?.headers?.['Retry-After']);
    assert.ok(OPENAPI_DOCUMENT.components.responses.MethodNotAllowed?.headers?.Allow);
  });

  it('operationIds are unique, as OpenAPI 3.1 §4.8.10 requires', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('every $ref points at a schema the document defines', () => {
    const refs = JSON.stringify(OPENAPI_DOCUMENT).match(/"\$ref":"[^"]+"/g) ?? [];
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      const name = ref.slice('"$ref":"#/components/schemas/'.length, -1);
      assert.ok(Object.hasOwn(OPENAPI_DOCUMENT.components.schemas, name), ref);
    }
  });
});
