import { stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchFlags } from '../bench/flags.ts';
import { BUILDER_PACKAGE, buildBinary, findBuilder } from './build-binary.ts';

/**
 * `npm run build:binary`: the whole service as one executable for hosts without Node
 * (docs/binary.md), in dist-bin/, named for the platform it runs on; or, given another platform's
 * node binary of the same version, for that platform.
 */
const USAGE = `npm run build:binary [-- flags]: the service as one executable, dist-bin/book-catalogue-<platform>-<arch> (docs/binary.md)
  --executable FILE  build into this node binary (another platform's, of the same version as ${BUILDER_PACKAGE} here) instead of ${BUILDER_PACKAGE}'s own
  --target P-A       that binary's platform-arch as Node names them (linux-arm64, darwin-arm64, win32-x64): the file's name
`;
const flags = benchFlags(USAGE, { executable: { type: 'string' }, target: { type: 'string' } });
const ROOT = fileURLToPath(new URL('..', import.meta.url));

async function main(): Promise<void> {
  if ((flags.executable === undefined) !== (flags.target === undefined)) {
    process.stderr.write(`--executable and --target go together\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  try {
    const builder = await findBuilder();
    const { file, built } = await buildBinary({
      root: ROOT,
      outDir: join(ROOT, 'dist-bin'),
      builder,
      ...(flags.executable !== undefined && { executable: flags.executable }),
      ...(flags.target !== undefined && { target: flags.target }),
    });
    const mb = Math.round((await stat(file)).size / 1e6);
    console.log(`${built ? 'built' : 'up to date:'} ${relative(process.cwd(), file)} (${mb} MB, Node ${builder.version})`);
  } catch (err) {
    process.stderr.write(`build:binary: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}

await main();
