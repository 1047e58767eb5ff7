import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFile, rm } from 'node:fs/promises';
import { createApp, MESSAGES, openStore } from '../src/index.ts';
import { OPENAPI_DOCUMENT } from '../src/service/openapi-document.ts';
import { OPERATION_METHODS, type Operation, type Response, type ResponseRef, type Schema } from '../src/http/openapi-types.ts';
import { MAX_CHANGES_PAGE_BYTES } from '../src/events/changes-route.ts';
import { EVENT_STREAM_DEFAULTS } from '../src/events/stream-registry.ts';
import { MAX_PAGE_LIMIT } from '../src/http/paging.ts';
import { RETAINED_CHANGES } from '../src/store/change-log.ts';
import { startApp, TEST_SECRET, type TestApp } from './helpers/app.ts';

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

function allResponses(): [string, Response | ResponseRef][] {
  const fromOperations = operations().flatMap(({ operation }) => Object.entries(operation.responses));
  return [...fromOperations, ...Object.entries(OPENAPI_DOCUMENT.components.responses)];
}

/** A schema's type and bounds alone (its description aside). */
function pick(schema: Schema | undefined): Record<string, unknown> {
  const { type, minimum, maximum } = schema ?? {};
  return { type, ...(minimum !== undefined && { minimum }), ...(maximum !== undefined && { maximum }) };
}

function envelopeSchema(response: Response | ResponseRef): Schema | undefined {
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

  it("its (path, method) set is the router's, plus OPTIONS (preflight or 405) on every path", () => {
    const documented = operations().map(({ method, path }) => `${method} ${path}`).sort();
    const routed = app.server.app.routes().flatMap(({ pattern, methods }) => [...methods, 'OPTIONS'].map((m) => `${m} ${pattern}`)).sort();
    assert.deepEqual(documented, routed);
  });

  it('every answer in components.responses is referred to by an operation, and every reference resolves', () => {
    const referred = new Set<string>();
    for (const { operation } of operations()) {
      for (const response of Object.values(operation.responses)) {
        if (response.$ref === undefined) continue;
        const name = response.$ref.slice('#/components/responses/'.length);
        assert.ok(Object.hasOwn(OPENAPI_DOCUMENT.components.responses, name), response.$ref);
        referred.add(name);
      }
    }
    assert.deepEqual([...referred].sort(), Object.keys(OPENAPI_DOCUMENT.components.responses).sort());
    const options = OPENAPI_DOCUMENT.paths['/books']?.options;
    assert.deepEqual(options?.responses['405'], { $ref: '#/components/responses/MethodNotAllowed' });
    assert.deepEqual(options?.responses['200'], { $ref: '#/components/responses/PreflightAllowed' });
  });

  it('OPTIONS answers as documented: 405 with Allow without CORS, 200 to an allowed preflight', async () => {
    const plain = await app.request('OPTIONS', '/books', { auth: false });
    assert.equal(plain.status, 405);
    assert.equal(plain.headers.get('allow'), 'GET, HEAD');
    const cors = await startApp({ corsOrigins: ['https://app.example'] });
    try {
      const preflight = await cors.request('OPTIONS', '/books', { auth: false, headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
      assert.equal(preflight.status, 200);
      assert.deepEqual(preflight.json, { status: 200, message: 'OK', data: null });
      // Every header the document names for an allowed preflight is on the answer.
      const documented = (OPENAPI_DOCUMENT.components.responses.PreflightAllowed as Response | undefined)?.headers ?? {};
      assert.ok(Object.keys(documented).length >= 5, Object.keys(documented).join(', '));
      for (const name of Object.keys(documented)) assert.ok(preflight.headers.has(name), `${name} on the preflight answer`);
    } finally {
      await cors.close();
    }
  });

  it('{id} is typed as the integer Book.id is, and HEAD operations declare no body', () => {
    const book = OPENAPI_DOCUMENT.paths['/book/{id}'];
    for (const op of [book?.get, book?.head, book?.put, book?.delete]) {
      const id = op?.parameters?.find((p) => p.name === 'id');
      assert.equal(id?.schema.type, 'integer');
    }
    const heads = operations().filter(({ method }) => method === 'HEAD');
    assert.ok(heads.length >= 4);
    for (const { path, operation } of heads) {
      for (const [status, response] of Object.entries(operation.responses)) {
        assert.equal(response.content, undefined, `HEAD ${path} ${status} declares a body`);
      }
    }
  });

  it('GET /openapi.json is typed as an OpenAPI document, not an empty object', () => {
    const response = OPENAPI_DOCUMENT.paths['/openapi.json']?.get?.responses['200'];
    assert.deepEqual(response?.content?.['application/json']?.schema, { $ref: '#/components/schemas/OpenApiDocument' });
    const schema = OPENAPI_DOCUMENT.components.schemas.OpenApiDocument;
    assert.deepEqual(schema?.required, ['openapi', 'info', 'servers', 'paths', 'components']);
  });

  it('/openapi.json carries a strong ETag, may be cached, and answers 304 to a matching If-None-Match', async () => {
    // The document as it is: fetch asks for gzip, whose form has a tag of its own (test/compression.test.ts).
    const identity = { 'accept-encoding': 'identity' };
    const first = await app.request('GET', '/openapi.json', { auth: false, headers: identity });
    const etag = first.headers.get('etag');
    assert.match(etag ?? '', /^"[A-Za-z0-9_-]{43}"$/);
    assert.equal(first.headers.get('cache-control'), 'no-cache');
    const head = await app.request('HEAD', '/openapi.json', { auth: false, headers: identity });
    assert.equal(head.headers.get('etag'), etag);
    for (const condition of [etag as string, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await app.request('GET', '/openapi.json', { auth: false, headers: { ...identity, 'if-none-match': condition } });
      assert.equal(again.status, 304, condition);
      assert.equal(again.text, '');
      assert.equal(again.headers.get('etag'), etag);
    }
    const stale = await app.request('GET', '/openapi.json', { auth: false, headers: { 'if-none-match': '"other"' } });
    assert.equal(stale.status, 200);
    assert.equal(stale.text, first.text);
    const book = await app.request('GET', '/books');
    assert.equal(book.headers.get('cache-control'), 'no-store');
  });

  it('servers: relative to the document by default, the mount path when createApp is given one', async () => {
    assert.deepEqual(OPENAPI_DOCUMENT.servers.map((s) => s.url), ['.']);
    const mounted = await startApp({ mountPath: '/catalogue' });
    try {
      const res = await mounted.request('GET', '/openapi.json', { auth: false });
      const served = JSON.parse(res.text) as { servers: { url: string }[] };
      assert.deepEqual(served.servers.map((s) => s.url), ['/catalogue']);
    } finally {
      await mounted.close();
    }
    // "." resolved against the document's URL is the mount point, wherever that is.
    assert.equal(new URL('.', 'http://host.example/catalogue/openapi.json').href, 'http://host.example/catalogue/');
    const store = await openStore(app.dataDir + '-mount');
    try {
      assert.throws(() => createApp({ store, secret: TEST_SECRET, username: 'u', password: 'p', mountPath: 'catalogue' }), { code: 'ERR_CONFIG' });
    } finally {
      await store.close();
      await rm(app.dataDir + '-mount', { recursive: true, force: true });
    }
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
        assert.ok(Object.hasOwn(operation.responses, String(res.status)), `${method} ${path} answered ${res.status}, which its operation documents`);
      } else {
        assert.equal(res.status, 401, `${method} ${path} is protected`);
        // GET /events also takes an event ticket in the query (docs/contract.md, "Event tickets").
        assert.deepEqual(operation.security, [{ rawToken: [] }, { bearer: [] }, ...(path === '/events' ? [{ eventTicket: [] }] : [])]);
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

  it('documents X-Last-Seq on the 200 and 410 of GET /changes, and a since that only /changes defaults to 0', () => {
    const changes = OPENAPI_DOCUMENT.paths['/changes']?.get;
    for (const status of ['200', '410']) assert.ok(changes?.responses[status]?.headers?.['X-Last-Seq'], status);
    const since = (path: string): string | undefined => OPENAPI_DOCUMENT.paths[path]?.get?.parameters?.find((p) => p.name === 'since')?.description;
    assert.match(since('/changes') ?? '', /default 0/);
    assert.match(since('/events') ?? '', /live changes only/);
    assert.doesNotMatch(since('/events') ?? '', /default/);
  });

  it("the feed's numbers in its prose are the service's own: changes retained, heartbeat interval, page size and bytes", () => {
    const changes = OPENAPI_DOCUMENT.paths['/changes']?.get;
    assert.match(changes?.description ?? '', new RegExp(`The last ${RETAINED_CHANGES.toLocaleString('en')} changes are retained`));
    const limit = changes?.parameters?.find((p) => p.name === 'limit')?.description ?? '';
    assert.match(limit, new RegExp(`1 to ${MAX_PAGE_LIMIT}, default ${MAX_PAGE_LIMIT}\\..*pass ${MAX_CHANGES_PAGE_BYTES} bytes`));
    assert.match(OPENAPI_DOCUMENT.paths['/events']?.get?.description ?? '', new RegExp(`comments every ${EVENT_STREAM_DEFAULTS.heartbeatMs / 1000} s\\.`));
  });

  it('every operation of a templated path declares each of its parameters, OPTIONS included (OpenAPI 3.1 §4.8.9)', () => {
    let checked = 0;
    for (const { method, path, operation } of operations()) {
      for (const name of path.match(/\{[^}]+\}/g) ?? []) {
        const declared = operation.parameters?.find((p) => p.in === 'path' && `{${p.name}}` === name);
        assert.equal(declared?.required, true, `${method} ${path} declares ${name}`);
        checked++;
      }
    }
    assert.ok(checked >= 5, `${checked} path parameters checked`);
  });

  it('limit, after and since are integers with their bounds, as the server parses them (decimal digits on the wire)', async () => {
    const schemaOf = (path: string, name: string): Schema | undefined => OPENAPI_DOCUMENT.paths[path]?.get?.parameters?.find((p) => p.name === name)?.schema;
    assert.deepEqual(pick(schemaOf('/books', 'limit')), { type: 'integer', minimum: 1, maximum: 1000 });
    assert.deepEqual(pick(schemaOf('/books', 'after')), { type: 'integer', minimum: 0 });
    assert.deepEqual(pick(schemaOf('/changes', 'limit')), { type: 'integer', minimum: 1, maximum: 1000 });
    for (const path of ['/changes', '/events']) assert.deepEqual(pick(schemaOf(path, 'since')), { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER }, path);
    for (const [query, status] of [['limit=1000', 200], ['limit=007', 200], ['limit=1001', 400], ['limit=0', 400], ['limit=1e2', 400], ['after=0', 200]] as const) {
      assert.equal((await app.request('GET', `/books?${query}`)).status, status, query);
    }
  });

  it('info names the license, as package.json does', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { license: string };
    assert.deepEqual(OPENAPI_DOCUMENT.info.license, { name: pkg.license, identifier: pkg.license });
  });

  it('201 Created documents Location and links the created id to getBook, updateBook and deleteBook', () => {
    const created = OPENAPI_DOCUMENT.paths['/book']?.post?.responses['201'];
    assert.equal(created?.headers?.Location?.required, true);
    const links = created?.links ?? {};
    assert.deepEqual(Object.values(links).map((l) => l.operationId).sort(), ['deleteBook', 'getBook', 'updateBook']);
    const ids = new Map(operations().map(({ operation }) => [operation.operationId, operation]));
    for (const link of Object.values(links)) {
      const target = ids.get(link.operationId);
      for (const name of Object.keys(link.parameters)) assert.ok(target?.parameters?.some((p) => p.name === name), `${link.operationId} has ${name}`);
      assert.deepEqual(link.parameters, { id: '$response.body#/data/id' });
    }
  });

  it('a client following the links from POST /book reaches the created book with get, update and delete', async () => {
    const created = await app.request('POST', '/book', { body: { title: 'Linked', author: 'A', year: 2000 } });
    const links = OPENAPI_DOCUMENT.paths['/book']?.post?.responses['201']?.links ?? {};
    const call = async (name: string, body?: unknown): Promise<number> => {
      const link = links[name];
      assert.ok(link, name);
      const target = operations().find(({ operation }) => operation.operationId === link.operationId);
      assert.ok(target, link.operationId);
      // A runtime expression `$response.body#<JSON pointer>` (OpenAPI 3.1 §4.8.20.4).
      const pointer = (link.parameters.id as string).slice('$response.body#'.length).split('/').slice(1);
      const value = pointer.reduce<unknown>((at, key) => (at as Record<string, unknown>)[key], created.json);
      const res = await app.request(target.method, target.path.replace('{id}', String(value)), body === undefined ? {} : { body });
      return res.status;
    };
    assert.equal(await call('getBook'), 200);
    assert.equal(await call('updateBook', { year: 2001 }), 200);
    assert.equal(await call('deleteBook'), 200);
    assert.equal(await call('getBook'), 404);
  });

  it('reads document If-None-Match, 304 and 412 (not the event stream); PUT and DELETE document If-Match and If-None-Match', () => {
    for (const { method, path, operation } of operations().filter(({ method }) => method === 'GET' || method === 'HEAD')) {
      const conditional = path !== '/events';
      assert.equal(Object.hasOwn(operation.responses, '304'), conditional, `${method} ${path} 304`);
      assert.equal(Object.hasOwn(operation.responses, '412'), conditional, `${method} ${path} 412`);
      assert.equal(operation.parameters?.some((p) => p.name === 'If-None-Match') ?? false, conditional, `${method} ${path} If-None-Match`);
      assert.equal(operation.responses['304']?.content, undefined, `${method} ${path}: a 304 has no body`);
    }
    assert.ok(OPENAPI_DOCUMENT.paths['/books']?.get?.responses['304']?.headers?.ETag);
    assert.ok(OPENAPI_DOCUMENT.paths['/book/{id}']?.get?.responses['304']?.headers?.ETag);
    const book = OPENAPI_DOCUMENT.paths['/book/{id}'];
    for (const op of [book?.put, book?.delete]) {
      assert.deepEqual(op?.parameters?.filter((p) => p.in === 'header').map((p) => p.name), ['If-Match', 'If-None-Match']);
      assert.ok(op?.responses['412']);
    }
  });

  it('operationIds are unique, as OpenAPI 3.1 §4.8.10 requires', () => {
    const ids = operations().map(({ operation }) => operation.operationId);
    assert.equal(new Set(ids).size, ids.length);
  });

  it('every $ref points at a schema the document defines', () => {
    const refs = JSON.stringify(OPENAPI_DOCUMENT).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      const name = ref.slice('"$ref":"#/components/schemas/'.length, -1);
      assert.ok(Object.hasOwn(OPENAPI_DOCUMENT.components.schemas, name), ref);
    }
    const other = (JSON.stringify(OPENAPI_DOCUMENT).match(/"\$ref":"[^"]+"/g) ?? []).filter((r) => !r.startsWith('"$ref":"#/components/'));
    assert.deepEqual(other, []);
  });
});
