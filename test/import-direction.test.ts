import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/**
 * The intended picture (docs/architecture.md, "Code map"), written once: what each part of src/ may import.
 * A part is a folder, or a file directly in src/ (named without `.ts`). The leaves import nothing of
 * the service; the HTTP toolkit (http) sits on them and the transport on it. Capabilities (auth,
 * books, events, health, openapi, ui, metrics) import the transport, the toolkit and the store's
 * interface, never each other nor the composition (service); only the command line (main, cli) and
 * the library (index) sit above it.
 */
const LEAVES = ['log', 'faults', 'version', 'memory', 'loop', 'package-files', 'compression'];
const CAPABILITY_BASE = ['transport', 'http', 'store', 'model', 'fs', ...LEAVES];
const CAPABILITIES = ['auth', 'books', 'events', 'health', 'openapi', 'ui', 'metrics'];
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  log: [],
  faults: [],
  memory: [],
  loop: [],
  'package-files': [],
  // The gzip format (RFC 1952 members from deflate segments): node:zlib only.
  compression: [],
  version: ['package-files'],
  model: ['faults'],
  fs: LEAVES,
  http: LEAVES,
  // The node:http(s) server and its connections; it answers what Node's parser refuses with the toolkit's envelope.
  transport: ['http', ...LEAVES],
  store: ['model', 'fs', ...LEAVES],
  ...Object.fromEntries(CAPABILITIES.map((name) => [name, CAPABILITY_BASE])),
  service: [...CAPABILITIES, ...CAPABILITY_BASE],
  cli: [...CAPABILITIES, ...CAPABILITY_BASE],
  index: ['service', 'cli', ...CAPABILITIES, ...CAPABILITY_BASE],
  main: ['service', 'cli', ...CAPABILITIES, ...CAPABILITY_BASE],
  // The single executable's main script loads dist/main.js by URL from the executable's assets, importing nothing.
  sea: [],
  // The store contract's suite (book-catalogue/conformance): the store's interface, and search over its lists.
  conformance: ['books', 'store', 'model', ...LEAVES],
  // What a store in another package builds on (book-catalogue/store-kit).
  'store-kit': ['store', 'model', ...LEAVES],
};

interface Edge {
  from: string;
  to: string;
  file: string;
  specifier: string;
}

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : Promise.resolve(e.name.endsWith('.ts') ? [join(dir, e.name)] : []))));
  return nested.flat();
}

/** `auth/jwt.ts` → auth; `log.ts` → log. */
function partOf(file: string): string {
  const rel = relative(SRC, file).split('/');
  return rel.length === 1 ? (rel[0] as string).replace(/\.ts$/, '') : (rel[0] as string);
}

/** Static imports and re-exports (type-only ones too: they are edges of the picture) and dynamic imports. */
const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g;

async function edges(): Promise<Edge[]> {
  const found: Edge[] = [];
  for (const file of await sourceFiles(SRC)) {
    const text = await readFile(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const specifier = (m[1] ?? m[2]) as string;
      if (!specifier.startsWith('.')) continue;
      const from = partOf(file);
      const to = partOf(resolve(dirname(file), specifier));
      if (from !== to) found.push({ from, to, file: relative(SRC, file), specifier });
    }
  }
  return found;
}

/** Parts on a cycle of the part graph, as `a → b → a` strings (empty when acyclic). */
function cycles(graph: Map<string, Set<string>>): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].join(' → '));
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return found;
}

/**
 * The code map of docs/architecture.md: each row's part (`http/`, `log.ts`) and the parts named in
 * its last column (`nothing`, or a list of code spans).
 */
async function documentedMap(): Promise<Map<string, string[]>> {
  const page = await readFile(resolve(SRC, '../docs/architecture.md'), 'utf8');
  const start = page.indexOf('\n## Code map\n');
  assert.ok(start !== -1, 'docs/architecture.md has a Code map section');
  const rows = page.slice(start).split('\n').filter((l) => /^\| `[\w.-]+\/?` \|/.test(l));
  return new Map(
    rows.map((row) => {
      const cells = row.slice(1, -1).split(' | ').map((c) => c.trim());
      const part = (cells[0] as string).replaceAll('`', '').replace(/\/$|\.ts$/, '');
      const last = cells.at(-1) as string;
      return [part, last === 'nothing' ? [] : [...last.matchAll(/`([\w-]+)`/g)].map((m) => m[1] as string)];
    }),
  );
}

describe('imports run one way (docs/architecture.md, "Code map")', () => {
  it('every part of src/ is placed in the picture', async () => {
    const parts = new Set((await sourceFiles(SRC)).map(partOf));
    const unplaced = [...parts].filter((p) => !Object.hasOwn(MAY_IMPORT, p));
    assert.deepEqual(unplaced, [], 'add the new part to MAY_IMPORT here and to the code map in docs/architecture.md');
  });

  it('the code map in docs/architecture.md is this picture, part by part', async () => {
    const documented = await documentedMap();
    assert.deepEqual([...documented.keys()].sort(), Object.keys(MAY_IMPORT).sort(), 'the same parts');
    for (const [part, deps] of documented) assert.deepEqual([...deps].sort(), [...(MAY_IMPORT[part] ?? [])].sort(), `what ${part} may import`);
  });

  it('no import runs against the intended direction', async () => {
    const wrong = (await edges())
      .filter((e) => !(MAY_IMPORT[e.from] ?? []).includes(e.to))
      .map((e) => `${e.file} imports ${e.specifier} (${e.from} may not import ${e.to})`);
    assert.deepEqual(wrong, []);
  });

  it('there is no import cycle between parts', async () => {
    const graph = new Map<string, Set<string>>();
    for (const e of await edges()) {
      const targets = graph.get(e.from) ?? new Set<string>();
      targets.add(e.to);
      graph.set(e.from, targets);
    }
    assert.deepEqual(cycles(graph), []);
  });

  it('the picture itself has no cycle, so it can be drawn bottom-up', () => {
    const graph = new Map(Object.entries(MAY_IMPORT).map(([part, deps]) => [part, new Set(deps)]));
    assert.deepEqual(cycles(graph), []);
  });

  it('the checker sees a wrong edge and a cycle when there is one', () => {
    assert.deepEqual(cycles(new Map([['http', new Set(['auth'])], ['auth', new Set(['http'])]])), ['http → auth → http']);
    const imports = [...`import { x } from '../service/app.ts';\nexport type { Y } from './y.ts';\nconst z = await import('../store/open.ts');`.matchAll(IMPORT)];
    assert.deepEqual(imports.map((m) => m[1] ?? m[2]), ['../service/app.ts', './y.ts', '../store/open.ts']);
    assert.equal(MAY_IMPORT.http?.includes('service'), false);
  });
});
