import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';

/**
 * The single executable: Node 26's own `--build-sea` (no other tool, no dependency) puts dist/ and
 * package.json, as assets, into a copy of the node binary, with dist/sea/entry.js as its main
 * script. Node 26 is fetched from the npm registry as the `node` package into npm's cache, like
 * `npm run test:node26`, whatever Node runs this.
 */

/** The Node line that builds the binary: `--build-sea` and an ES module main script need 25.5 or later. */
export const BUILDER_PACKAGE = 'node@26';
/** The main script, as tsc builds it from src/sea/entry.ts; it is not an asset. */
const ENTRY = 'dist/sea/entry.js';
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

export interface Builder {
  /** The node@26 binary in npm's cache. */
  execPath: string;
  version: string;
  platform: string;
  arch: string;
}

/** node@26 could not be fetched (no registry, no cache): nothing to build with. */
export class BuilderUnavailableError extends Error {
  override readonly name = 'BuilderUnavailableError';
}

function run(file: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // npm.cmd is a batch file, which Windows starts only through a shell; the arguments are fixed here.
    execFile(file, args, { ...options, maxBuffer: 16 * 1024 * 1024, shell: file === 'npm.cmd' }, (err, stdout, stderr) => {
      if (err === null) resolve({ stdout, stderr });
      else reject(Object.assign(err, { stderr }));
    });
  });
}

/** npm's error codes for a registry it cannot reach (offline mode included); any other failure is a fault to show, not to skip. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ENETUNREACH', 'EHOSTUNREACH', 'ENOTCACHED', 'ERR_SOCKET_TIMEOUT']);

/** Finds (and, the first time, fetches) node@26 through `npm exec`. */
export async function findBuilder(): Promise<Builder> {
  // Inside `npm exec -c '…'` this variable holds that command, and the nested npm exec would refuse its own arguments (EUSAGE).
  const { npm_config_call: _call, ...env } = process.env;
  let stdout: string;
  try {
    ({ stdout } = await run(NPM, ['exec', '--yes', `--package=${BUILDER_PACKAGE}`, '--', 'node', '-p', 'JSON.stringify([process.execPath, process.version, process.platform, process.arch])'], { env }));
  } catch (err) {
    // npm prints a dozen `npm error` lines; the one naming the error says most (`FetchError: request to … failed, reason: …`).
    const lines = String((err as { stderr?: string }).stderr ?? '').split('\n');
    const line = lines.find((l) => /^npm error \w*Error: /.test(l)) ?? lines.find((l) => l.startsWith('npm error '));
    const detail = `npm exec --package=${BUILDER_PACKAGE} failed: ${line?.slice('npm error '.length) ?? (err as Error).message}`;
    const code = /^npm error code (\S+)$/m.exec(lines.join('\n'))?.[1];
    throw code !== undefined && UNREACHABLE.has(code) ? new BuilderUnavailableError(detail) : new Error(detail);
  }
  const [execPath, version, platform, arch] = JSON.parse(stdout.trim().split('\n').at(-1) as string) as string[];
  return { execPath: execPath as string, version: version as string, platform: platform as string, arch: arch as string };
}

/** The output's file name: `book-catalogue-linux-x64`; Windows wants `.exe`. */
export function binaryName(target: string): string {
  return `book-catalogue-${target}${target.startsWith('win32-') ? '.exe' : ''}`;
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(entries.map((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : Promise.resolve([join(dir, e.name)]))));
  return nested.flat();
}

/**
 * What the binary carries, by asset key (the path from the package root, with `/`, which is what
 * src/package-files.ts and src/sea/entry.ts ask for): every file of dist/ but declarations and
 * the main script's folder, and package.json (the version).
 */
/** Entry points of the library for other stores' authors (package.json's exports), which the service never loads. */
const LIBRARY_ONLY = ['dist/conformance/', 'dist/conformance.js', 'dist/store-kit.js'];

export async function seaAssets(root: string): Promise<Map<string, string>> {
  const assets = new Map<string, string>();
  for (const file of (await filesUnder(join(root, 'dist'))).sort()) {
    const key = relative(root, file).split(sep).join('/');
    if (key.endsWith('.d.ts') || key.endsWith('.map') || key.startsWith('dist/sea/') || LIBRARY_ONLY.some((part) => key.startsWith(part))) continue;
    assets.set(key, file);
  }
  assets.set('package.json', join(root, 'package.json'));
  return assets;
}

/** How the binary is made, besides its files: part of the build's hash too. */
const SEA_SETTINGS = {
  mainFormat: 'module',
  // Node's notice that single executables are experimental is for the builder, not the binary's users.
  disableExperimentalSEAWarning: true,
  // Both are V8 data tied to the platform that made them; without them the blob suits any target.
  useSnapshot: false,
  useCodeCache: false,
} as const;

/** A hash of everything the binary is made of, so that an unchanged build is not done twice. */
async function inputsHash(root: string, assets: ReadonlyMap<string, string>, builder: Builder, target: string): Promise<string> {
  const hash = createHash('sha256').update(`${builder.version} ${target} ${JSON.stringify(SEA_SETTINGS)}\n`);
  for (const [key, file] of [[ENTRY, join(root, ENTRY)] as const, ...assets]) {
    const bytes = await readFile(file);
    hash.update(`${key} ${bytes.length}\n`).update(bytes);
  }
  return hash.digest('hex');
}

async function readIfThere(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

export interface BuildOptions {
  /** The package root: dist/ (built) and package.json. */
  root: string;
  /** Where the binary goes (dist-bin/). */
  outDir: string;
  builder: Builder;
  /** Another platform's node binary, of exactly `builder.version`, to put the application into. */
  executable?: string;
  /** `<platform>-<arch>` of `executable`: the output's name. */
  target?: string;
}

export interface Built {
  file: string;
  /** false: the binary of these very inputs was already there. */
  built: boolean;
}

/**
 * Builds `<outDir>/book-catalogue-<platform>-<arch>`, unless the one there was built from the same
 * dist/, package.json and Node (a hidden `.inputs` file beside it holds their hash): the test suite
 * and the bench on each Node line then share one build.
 */
export async function buildBinary(options: BuildOptions): Promise<Built> {
  const { root, outDir, builder } = options;
  const target = options.target ?? `${builder.platform}-${builder.arch}`;
  const file = join(outDir, binaryName(target));
  const stamp = join(outDir, `.${binaryName(target)}.inputs`);
  const assets = await seaAssets(root);
  // Another platform's node binary is a file this script cannot vouch for: always build from it.
  const hash = options.executable === undefined ? await inputsHash(root, assets, builder, target) : undefined;
  if (hash !== undefined && (await readIfThere(stamp)) === hash && (await stat(file).catch(() => undefined)) !== undefined) return { file, built: false };

  await mkdir(outDir, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'book-catalogue-sea-'));
  // Written beside the output and renamed over it: a reader never sees half a binary.
  const partial = join(outDir, `.${binaryName(target)}.${process.pid}.partial`);
  try {
    const config = join(work, 'sea-config.json');
    await writeFile(
      config,
      JSON.stringify({
        ...SEA_SETTINGS,
        main: join(root, ENTRY),
        output: partial,
        ...(options.executable !== undefined && { executable: options.executable }),
        assets: Object.fromEntries(assets),
      }),
    );
    await run(builder.execPath, ['--build-sea', config], { cwd: work });
    await rename(partial, file);
    if (hash !== undefined) await writeFile(stamp, hash);
    else await rm(stamp, { force: true });
  } finally {
    await rm(partial, { force: true });
    await rm(work, { recursive: true, force: true });
  }
  return { file, built: true };
}
