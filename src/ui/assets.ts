import { hash } from 'node:crypto';
import { extname } from 'node:path';
import { listPackageFolder, packageFileLocation, readPackageFile } from '../package-files.ts';

/** One file of the built-in page, ready to send. */
export interface UiAsset {
  readonly body: Buffer;
  readonly contentType: string;
  /** Strong entity tag (RFC 9110 §8.8.3): a hash of exactly these bytes. */
  readonly etag: string;
}

export interface UiAssets {
  /** The page itself, with its asset links pointing at `ui/<version>/`. */
  readonly page: UiAsset;
  /** A hash of every asset: part of their URLs, so a new build never meets an old cached file. */
  readonly version: string;
  /** Scripts, styles and the icon by file name. */
  readonly files: ReadonlyMap<string, UiAsset>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The page was not built (`npm run build`): createApp with `ui: true` cannot serve it. */
export class UiNotBuiltError extends Error {
  override readonly name = 'UiNotBuiltError';
}

/** Where `npm run build` puts the page, from the package root. */
export const UI_FOLDER = 'dist/public/';

/** The page's template; `%ASSETS%` becomes the versioned asset folder, `%PRELOAD%` the module preloads. */
const TEMPLATE = 'index.html';

function asset(body: Buffer, contentType: string): UiAsset {
  return { body, contentType, etag: `"${hash('sha256', body, 'base64url')}"` };
}

/**
 * Reads the built page once, when an app with `ui: true` is created: serving it then costs no
 * file system call. Throws with the directory named when the page was not built.
 */
export function loadUiAssets(): UiAssets {
  let names: string[];
  let template: string;
  try {
    names = listPackageFolder(UI_FOLDER);
    template = readPackageFile(UI_FOLDER + TEMPLATE).toString('utf8');
  } catch (err) {
    throw new UiNotBuiltError(`the built-in page is not built in ${packageFileLocation(UI_FOLDER)} (npm run build): ${(err as Error).message}`);
  }
  const files = new Map<string, UiAsset>();
  for (const name of names) {
    const type = CONTENT_TYPES[extname(name)];
    if (type !== undefined) files.set(name, asset(readPackageFile(UI_FOLDER + name), type));
  }
  const version = hash('sha256', [...files].map(([name, file]) => `${name} ${file.etag}`).join('\n'), 'hex').slice(0, 16);
  const base = `ui/${version}/`;
  const preload = [...files.keys()]
    .filter((name) => name.endsWith('.js'))
    .map((name) => `<link rel="modulepreload" href="${base}${name}">`)
    .join('\n    ');
  const html = template.replaceAll('%ASSETS%/', base).replace('%PRELOAD%', preload);
  return { page: asset(Buffer.from(html, 'utf8'), 'text/html; charset=utf-8'), version, files };
}
