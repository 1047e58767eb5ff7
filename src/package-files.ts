import { readdirSync, readFileSync } from 'node:fs';
import * as sea from 'node:sea';
import { fileURLToPath } from 'node:url';

/**
 * The one way the service reads what its own package ships (package.json, the built page): from
 * the files around dist/ when node runs it, from the executable's assets when it runs as the single
 * executable (docs/binary.md), which unpacks nothing to disk. A path is relative to the package
 * root, with `/`: `package.json`, `dist/public/index.html`.
 */

/** The package root: one level above this module in src/ and dist/ alike. */
const ROOT = new URL('../', import.meta.url);

/** `getAssetKeys` is newer (Node 24.8) than the @types/node 20 this package compiles against; every Node that builds the binary has it. */
type SeaAssets = typeof sea & { getAssetKeys(): string[] };

/** The executable's assets; undefined when node runs dist/ (or src/). */
const assets: SeaAssets | undefined = sea.isSea() ? (sea as SeaAssets) : undefined;

export function readPackageFile(path: string): Buffer {
  return assets === undefined ? readFileSync(new URL(path, ROOT)) : Buffer.from(assets.getAsset(path));
}

/** The names in `folder` (a path ending in `/`), sorted. */
export function listPackageFolder(folder: string): string[] {
  if (assets === undefined) return readdirSync(new URL(folder, ROOT)).sort();
  return assets
    .getAssetKeys()
    .filter((key) => key.startsWith(folder) && !key.includes('/', folder.length))
    .map((key) => key.slice(folder.length))
    .sort();
}

/** Where `path` is, for a message a person acts on. */
export function packageFileLocation(path: string): string {
  return assets === undefined ? fileURLToPath(new URL(path, ROOT)) : `${path} in ${process.execPath}`;
}

/** The URL of a file beside the package's own (a module to import); undefined in the single executable, which has only its assets. */
export function packageFileUrl(path: string): URL | undefined {
  return assets === undefined ? new URL(path, ROOT) : undefined;
}
