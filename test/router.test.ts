import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Router, type RouteDefinition } from '../src/http/router.ts';

const ROUTES: RouteDefinition<string>[] = [
  { method: 'POST', pattern: '/token', handler: 'token' },
  { method: 'POST', pattern: '/book', handler: 'create' },
  { method: 'GET', pattern: '/books', handler: 'list' },
  { method: 'GET', pattern: '/book/{id}', handler: 'read' },
  { method: 'PUT', pattern: '/book/{id}', handler: 'update' },
  { method: 'DELETE', pattern: '/book/{id}', handler: 'delete' },
  { method: 'GET', pattern: '/a/{x}/b/{y}', handler: 'two-params' },
];

/** The pattern a handler was registered under: what the metrics' route label is. */
function patternOf(handler: string): string {
  return (ROUTES.find((r) => r.handler === handler) as RouteDefinition<string>).pattern;
}

describe('Router (no HTTP)', () => {
  const router = new Router(ROUTES);

  describe('match(method, path) finds the handler, the parameters and the pattern', () => {
    const rows: { method: string; path: string; handler: string; params: string[] }[] = [
      { method: 'POST', path: '/token', handler: 'token', params: [] },
      { method: 'GET', path: '/books', handler: 'list', params: [] },
      { method: 'GET', path: '/book/42', handler: 'read', params: ['42'] },
      { method: 'PUT', path: '/book/42', handler: 'update', params: ['42'] },
      { method: 'DELETE', path: '/book/abc', handler: 'delete', params: ['abc'] },
      { method: 'GET', path: '/book/%31', handler: 'read', params: ['%31'] },
      { method: 'GET', path: '/a/1/b/2', handler: 'two-params', params: ['1', '2'] },
      { method: 'HEAD', path: '/books', handler: 'list', params: [] },
      { method: 'HEAD', path: '/book/7', handler: 'read', params: ['7'] },
      { method: 'GET', path: '/books/', handler: 'list', params: [] },
      { method: 'GET', path: '/book/7/', handler: 'read', params: ['7'] },
    ];
    for (const row of rows) {
      it(`${row.method} ${row.path} → ${row.handler} ${JSON.stringify(row.params)}`, () => {
        assert.deepEqual(router.match(row.method, row.path), { kind: 'found', handler: row.handler, params: row.params, pattern: patternOf(row.handler) });
      });
    }
  });

  describe('a known path with another method: the sorted Allow list, HEAD included where GET is, and the pattern', () => {
    const rows: { method: string; path: string; allow: string; pattern: string }[] = [
      { method: 'PATCH', path: '/book/1', allow: 'DELETE, GET, HEAD, PUT', pattern: '/book/{id}' },
      { method: 'POST', path: '/books', allow: 'GET, HEAD', pattern: '/books' },
      { method: 'GET', path: '/book', allow: 'POST', pattern: '/book' },
      { method: 'GET', path: '/book/', allow: 'POST', pattern: '/book' },
      { method: 'HEAD', path: '/token', allow: 'POST', pattern: '/token' },
      { method: 'OPTIONS', path: '/a/1/b/2', allow: 'GET, HEAD', pattern: '/a/{x}/b/{y}' },
      { method: 'get', path: '/books', allow: 'GET, HEAD', pattern: '/books' },
    ];
    for (const row of rows) {
      it(`${row.method} ${row.path} → Allow: ${row.allow}`, () => {
        assert.deepEqual(router.match(row.method, row.path), { kind: 'method', allow: row.allow, pattern: row.pattern });
      });
    }
  });

  describe('an unknown path matches nothing', () => {
    for (const path of ['', '/', '/nope', '/book//', '/book/1/2', '/books//', '//books', 'books', '/Books', '/a/1/b', '/a//b/2']) {
      it(`GET ${JSON.stringify(path)} → none`, () => {
        assert.deepEqual(router.match('GET', path), { kind: 'none' });
      });
    }
  });

  it('routes() lists every pattern with its methods, HEAD included where GET is', () => {
    assert.deepEqual(router.routes(), [
      { pattern: '/token', methods: ['POST'] },
      { pattern: '/book', methods: ['POST'] },
      { pattern: '/books', methods: ['GET', 'HEAD'] },
      { pattern: '/book/{id}', methods: ['DELETE', 'GET', 'HEAD', 'PUT'] },
      { pattern: '/a/{x}/b/{y}', methods: ['GET', 'HEAD'] },
    ]);
  });

  it('a duplicate route is refused when the table is built', () => {
    assert.throws(() => new Router([ROUTES[0] as RouteDefinition<string>, ROUTES[0] as RouteDefinition<string>]), /duplicate route POST \/token/);
  });

  it('a pattern that does not start with / is refused', () => {
    assert.throws(() => new Router([{ method: 'GET', pattern: 'books', handler: 'x' }]), /must start with \//);
  });

  it('a root route matches only /', () => {
    const root = new Router([{ method: 'GET', pattern: '/', handler: 'root' }]);
    assert.deepEqual(root.match('GET', '/'), { kind: 'found', handler: 'root', params: [], pattern: '/' });
    assert.deepEqual(root.match('GET', '/x'), { kind: 'none' });
  });
});
