/**
 * A router is a table plus one lookup (trouter, polka): no regexes, no middleware. Patterns are
 * literal segments and `{name}` parameters; a parameter matches one non-empty segment.
 */
export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';

export interface RouteDefinition<H> {
  method: Exclude<Method, 'HEAD'>;
  pattern: string;
  handler: H;
}

export type Match<H> =
  | { kind: 'found'; handler: H; params: readonly string[]; pattern: string }
  /** The path exists but not with this method: 405 with this `Allow` value. */
  | { kind: 'method'; allow: string; pattern: string }
  | { kind: 'none' };

interface CompiledPath<H> {
  pattern: string;
  /** Literal segments, or null where a parameter stands. */
  segments: readonly (string | null)[];
  handlers: Map<string, H>;
  allow: string;
}

const NONE = { kind: 'none' } as const;

export class Router<H> {
  readonly #paths: CompiledPath<H>[] = [];
  readonly #static = new Map<string, CompiledPath<H>>();

  constructor(routes: readonly RouteDefinition<H>[]) {
    for (const route of routes) this.#add(route);
    for (const path of this.#paths) {
      const methods = [...path.handlers.keys()];
      if (path.handlers.has('GET')) methods.push('HEAD');
      path.allow = methods.sort().join(', ');
    }
  }

  /** Every (pattern, method) pair, HEAD included where GET is: for documentation and tests. */
  routes(): { pattern: string; methods: string[] }[] {
    return this.#paths.map((p) => ({ pattern: p.pattern, methods: p.allow.split(', ') }));
  }

  /**
   * `path` is the request target without its query string. One trailing slash is tolerated;
   * percent-escapes are not decoded (docs/contract.md, "Paths and ids").
   */
  match(method: string, path: string): Match<H> {
    if (path.length > 1 && path.charCodeAt(path.length - 1) === 47 /* / */) path = path.slice(0, -1);
    let compiled = this.#static.get(path);
    let params: readonly string[] = [];
    if (compiled === undefined) {
      for (const candidate of this.#paths) {
        const found = matchSegments(candidate.segments, path);
        if (found !== null) {
          compiled = candidate;
          params = found;
          break;
        }
      }
      if (compiled === undefined) return NONE;
    }
    const handler = compiled.handlers.get(method === 'HEAD' ? 'GET' : method);
    if (handler === undefined) return { kind: 'method', allow: compiled.allow, pattern: compiled.pattern };
    return { kind: 'found', handler, params, pattern: compiled.pattern };
  }

  #add(route: RouteDefinition<H>): void {
    if (!route.pattern.startsWith('/')) throw new TypeError(`route pattern must start with /: ${route.pattern}`);
    const parts = route.pattern === '/' ? [''] : route.pattern.slice(1).split('/');
    const segments = parts.map((p) => (p.startsWith('{') && p.endsWith('}') ? null : p));
    let compiled = this.#paths.find((p) => p.pattern === route.pattern);
    if (compiled === undefined) {
      compiled = { pattern: route.pattern, segments, handlers: new Map(), allow: '' };
      this.#paths.push(compiled);
      if (!segments.includes(null)) this.#static.set(route.pattern, compiled);
    }
    if (compiled.handlers.has(route.method)) throw new TypeError(`duplicate route ${route.method} ${route.pattern}`);
    compiled.handlers.set(route.method, route.handler);
  }
}

/** Walks the path once, without splitting it: the parameter values, or null for no match. */
function matchSegments(segments: readonly (string | null)[], path: string): string[] | null {
  if (path.charCodeAt(0) !== 47) return null;
  const params: string[] = [];
  let pos = 1;
  for (let i = 0; i < segments.length; i++) {
    if (pos > path.length) return null;
    let end = path.indexOf('/', pos);
    if (end === -1) end = path.length;
    const literal = segments[i] as string | null;
    if (literal === null) {
      if (end === pos) return null;
      params.push(path.slice(pos, end));
    } else if (end - pos !== literal.length || !path.startsWith(literal, pos)) {
      return null;
    }
    pos = end + 1;
  }
  return pos === path.length + 1 ? params : null;
}
