/**
 * The main script of the single executable (`npm run build:binary`, docs/binary.md): it serves the
 * modules of dist/ from the executable's assets, then runs dist/main.js as `node dist/main.js`
 * does. Nothing is unpacked to disk. Only the binary runs it: imported anywhere else it would hook
 * that process's module loader.
 */
import * as nodeModule from 'node:module';
import { getAsset } from 'node:sea';

/** Where the assets' modules live: a URL no file system holds, so no real file is ever taken for one. */
const ROOT = 'file:///__sea__/';
/**
 * A module made here whose only work is `import()` of main.js. A main script's own `import()`
 * reaches built-in modules only, and `require()` of an ES module refuses top-level await; an
 * `import()` from a module the loader serves has neither limit.
 */
const START = `${ROOT}start.js`;
const MAIN = `${ROOT}dist/main.js`;

interface ResolveContext {
  parentURL?: string | undefined;
}
interface Resolved {
  url: string;
  format?: string | null | undefined;
  shortCircuit?: boolean;
}
interface Loaded {
  format?: string | null | undefined;
  source?: unknown;
  shortCircuit?: boolean;
}
interface Hooks {
  resolve(specifier: string, context: ResolveContext, next: (specifier: string, context: ResolveContext) => Resolved): Resolved;
  load(url: string, context: object, next: (url: string, context: object) => Loaded): Loaded;
}
/** `registerHooks` (Node 22.15) is newer than the @types/node 20 this package compiles against; the Node that builds the binary has it. */
const { createRequire, registerHooks } = nodeModule as typeof nodeModule & { registerHooks(hooks: Hooks): unknown };

registerHooks({
  resolve(specifier, context, next) {
    if (specifier.startsWith(ROOT)) return { url: specifier, format: 'module', shortCircuit: true };
    // dist/ imports its own modules by relative path only (test/binary-loadable.test.ts checks), built-ins by name.
    if (context.parentURL?.startsWith(ROOT) === true && (specifier.startsWith('./') || specifier.startsWith('../'))) {
      return { url: new URL(specifier, context.parentURL).href, format: 'module', shortCircuit: true };
    }
    return next(specifier, context);
  },
  load(url, context, next) {
    if (url === START) return { format: 'module', source: `export default import(${JSON.stringify(MAIN)});`, shortCircuit: true };
    // The asset key is the path from the package root (`dist/transport/http-server.js`), as the build names it.
    if (url.startsWith(ROOT)) return { format: 'module', source: getAsset(url.slice(ROOT.length), 'utf8'), shortCircuit: true };
    return next(url, context);
  },
});

createRequire(import.meta.url)(START);
