/**
 * A router is a table plus one lookup (trouter, polka): no regexes, no middleware. Patterns are
 * literal segments and `{name}` parameters; a parameter matches one non-empty segment.
 */
export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

/** What the router needs of a route; the rest of it is the router's caller's business. */
export interface Routable {
  readonly method: Exclude<Method, 'HEAD'>;
  readonly pattern: string;
}

export type Params = Readonly<Record<string, string>>;

export type Match<R> =
  | { readonly kind: 'found'; readonly route: R; readonly params: Params; readonly pattern: string }
  /** The path exists but not with this method: 405 with this `Allow` value. */
  | { readonly kind: 'method'; readonly allow: string; readonly pattern: string }
  | { readonly kind: 'none' };

interface CompiledPath<R> {
  pattern: string;
  /** Literal segments, or null where a parameter stands. */
  segments: readonly (string | null)[];
  /** The parameters' names, in pattern order. */
  names: readonly string[];
  routes: Map<string, R>;
  allow: string;
  /**
   * A path without parameters matches the same way every time: its matches by method (and its
   * 405) are made once, not on every request (docs/performance.md, "Where the microseconds go").
   */
  matches: Map<string, Match<R>>;
  wrongMethod: Match<R>;
}

const NONE = { kind: 'none' } as const;
const NO_PARAMS: Params = Object.freeze({});

export class Router<R extends Routable> {
  readonly #paths: CompiledPath<R>[] = [];
  readonly #static = new Map<string, CompiledPath<R>>();
  /** The paths with parameters, in table order: a path no static one names is matched against these alone. */
  readonly #parameterized: CompiledPath<R>[] = [];

  /**
   * `everywhere`: methods every path answers besides its routes' (OPTIONS, when CORS answers it on
   * every path), so that `Allow` lists them too.
   */
  constructor(routes: readonly R[], everywhere: readonly Method[] = []) {
    for (const route of routes) this.#add(route);
    for (const path of this.#paths) {
      const methods = new Set<string>([...path.routes.keys(), ...everywhere]);
      if (path.routes.has('GET')) methods.add('HEAD');
      path.allow = [...methods].sort().join(', ');
      path.wrongMethod = { kind: 'method', allow: path.allow, pattern: path.pattern };
      if (path.segments.includes(null)) this.#parameterized.push(path);
      else for (const [method, route] of path.routes) path.matches.set(method, { kind: 'found', route, params: NO_PARAMS, pattern: path.pattern });
    }
  }

  /** Every (pattern, method) pair, HEAD included where GET is: for documentation and tests. */
  routes(): { pattern: string; methods: string[] }[] {
    return this.#paths.map((p) => ({ pattern: p.pattern, methods: p.allow.split(', ') }));
  }

  /** Every method some path answers, and `also`, sorted as `Allow` is: what `OPTIONS *` lists. */
  allowAnywhere(also: Method): string {
    const methods = new Set<string>([also]);
    for (const path of this.#paths) for (const method of path.allow.split(', ')) methods.add(method);
    return [...methods].sort().join(', ');
  }

  /**
   * `path` is the request target without its query string. One trailing slash is tolerated;
   * percent-escapes are not decoded (docs/contract.md, "Paths and ids").
   */
  match(method: string, path: string): Match<R> {
    if (path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */) path = path.slice(0, -1);
    const routeMethod = method === 'HEAD' ? 'GET' : method;
    const known = this.#static.get(path);
    if (known !== undefined) return known.matches.get(routeMethod) ?? known.wrongMethod;
    for (const candidate of this.#parameterized) {
      const params = matchSegments(candidate, path);
      if (params === null) continue;
      const route = candidate.routes.get(routeMethod);
      return route === undefined ? candidate.wrongMethod : { kind: 'found', route, params, pattern: candidate.pattern };
    }
    return NONE;
  }

  #add(route: R): void {
    if (!route.pattern.startsWith('/')) throw new TypeError(`route pattern must start with /: ${route.pattern}`);
    const parts = route.pattern === '/' ? [''] : route.pattern.slice(1).split('/');
    const isParam = (p: string): boolean => p.startsWith('{') && p.endsWith('}');
    const segments = parts.map((p) => (isParam(p) ? null : p));
    const names = parts.filter(isParam).map((p) => p.slice(1, -1));
    if (new Set(names).size !== names.length) throw new TypeError(`route pattern names a parameter twice: ${route.pattern}`);
    let compiled = this.#paths.find((p) => p.pattern === route.pattern);
    if (compiled === undefined) {
      compiled = { pattern: route.pattern, segments, names, routes: new Map(), allow: '', matches: new Map(), wrongMethod: NONE };
      this.#paths.push(compiled);
      if (!segments.includes(null)) this.#static.set(route.pattern, compiled);
    }
    if (compiled.routes.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.pattern}`);
    compiled.routes.set(route.method, route);
  }
}


/** Walks the path once, without splitting it: the parameters by name, or null for no match. */
function matchSegments({ segments, names }: { segments: readonly (string | null)[]; names: readonly string[] }, path: string): Params | null {
  if (path.charCodeAt(0) !== 47) return null;
  let params: Record<string, string> | undefined;
  let named = 0;
  let pos = 1;
  for (let i = 0; i < segments.length; i++) {
    if (pos > path.length) return null;
    let end = path.indexOf('/', pos);
    if (end === -1) end = path.length;
    const literal = segments[i] as string | null;
    if (literal === null) {
      if (end === pos) return null;
      (params ??= {})[names[named++] as string] = path.slice(pos, end);
    } else if (end - pos !== literal.length || !path.startsWith(literal, pos)) {
      return null;
    }
    pos = end + 1;
  }
  return pos === path.length + 1 ? (params ?? NO_PARAMS) : null;
}
