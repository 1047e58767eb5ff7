import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Router, type Match, type Routable } from '../src/http/router.ts';

interface NamedRoute extends Routable {
  readonly name: string;
}

/** A match with the route reduced to its name, for deepEqual. */
function named(match: Match<NamedRoute>): unknown {
  return match.kind === 'found' ? { kind: 'found', route: match.route.name, params: { ...match.params }, pattern: match.pattern } : match;
}

const ROUTES: NamedRoute[] = [
  { method: 'POST', pattern: '/token', name: 'token' },
  { method: 'POST', pattern: '/book', name: 'create' },
  { method: 'GET', pattern: '/books', name: 'list' },
  { method: 'GET', pattern: '/book/{id}', name: 'read' },
  { method: 'PUT', pattern: '/book/{id}', name: 'update' },
  { method: 'DELETE', pattern: '/book/{id}', name: 'delete' },
  { method: 'GET', pattern: '/a/{x}/b/{y}', name: 'two-params' },
];

/** The pattern a route was registered under: what the metrics' route label is. */
function patternOf(name: string): string {
  return (ROUTES.find((r) => r.name === name) as NamedRoute).pattern;
}

describe('Router (no HTTP)', () => {
  const router = new Router(ROUTES);

  describe('match(method, path) finds the route, its parameters by name and the pattern', () => {
    const rows: { method: string; path: string; route: string; params: Record<string, string> }[] = [
      { method: 'POST', path: '/token', route: 'token', params: {} },
      { method: 'GET', path: '/books', route: 'list', params: {} },
      { method: 'GET', path: '/book/42', route: 'read', params: { id: '42' } },
      { method: 'PUT', path: '/book/42', route: 'update', params: { id: '42' } },
      { method: 'DELETE', path: '/book/abc', route: 'delete', params: { id: 'abc' } },
      { method: 'GET', path: '/book/%31', route: 'read', params: { id: '%31' } },
      { method: 'GET', path: '/a/1/b/2', route: 'two-params', params: { x: '1', y: '2' } },
      { method: 'HEAD', path: '/books', route: 'list', params: {} },
      { method: 'HEAD', path: '/book/7', route: 'read', params: { id: '7' } },
      { method: 'GET', path: '/books/', route: 'list', params: {} },
      { method: 'GET', path: '/book/7/', route: 'read', params: { id: '7' } },
    ];
    for (const row of rows) {
      it(`${row.method} ${row.path} → ${row.route} ${JSON.stringify(row.params)}`, () => {
        assert.deepEqual(named(router.match(row.method, row.path)), { kind: 'found', route: row.route, params: row.params, pattern: patternOf(row.route) });
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

  describe('methods every path answers (OPTIONS with CORS on) are in each Allow, and OPTIONS * lists every method', () => {
    const everywhere = new Router(ROUTES, ['OPTIONS']);
    it('PATCH /book/1 → Allow: DELETE, GET, HEAD, OPTIONS, PUT; POST /books → GET, HEAD, OPTIONS', () => {
      assert.deepEqual(everywhere.match('PATCH', '/book/1'), { kind: 'method', allow: 'DELETE, GET, HEAD, OPTIONS, PUT', pattern: '/book/{id}' });
      assert.deepEqual(everywhere.match('POST', '/books'), { kind: 'method', allow: 'GET, HEAD, OPTIONS', pattern: '/books' });
    });
    it('allowAnywhere: the sorted union of every path\'s methods and the one given', () => {
      assert.equal(router.allowAnywhere('OPTIONS'), 'DELETE, GET, HEAD, OPTIONS, POST, PUT');
      assert.equal(everywhere.allowAnywhere('OPTIONS'), 'DELETE, GET, HEAD, OPTIONS, POST, PUT');
    });
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
    assert.throws(() => new Router([ROUTES[0] as NamedRoute, ROUTES[0] as NamedRoute]), /duplicate route POST \/token/);
  });

  it('a pattern that does not start with / is refused', () => {
    assert.throws(() => new Router([{ method: 'GET', pattern: 'books', name: 'x' }]), /must start with \//);
  });

  it('a root route matches only /', () => {
    const root = new Router([{ method: 'GET', pattern: '/', name: 'root' }]);
    assert.deepEqual(named(root.match('GET', '/')), { kind: 'found', route: 'root', params: {}, pattern: '/' });
    assert.deepEqual(root.match('GET', '/x'), { kind: 'none' });
  });
});
