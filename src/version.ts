import { readPackageFile } from './package-files.ts';

/** This package's version, from its package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readPackageFile('package.json').toString('utf8')) as { version: string };
  return pkg.version;
}
