import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { killAll, MAIN, outputMatching, startMain, type RunningService } from './helpers/process.ts';
import { fences, isSkipped, matchesShown, runnable, type RunnableBlock } from './helpers/readme-blocks.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A document whose examples run: its path from the repository root and its text. */
interface Doc {
  path: string;
  text: string;
}

/** Pages whose examples need something this service does not start, and the test that runs them. */
const RUN_ELSEWHERE = new Set([
  // The single executable, which test/binary.test.ts builds and runs the page's examples against.
  'binary.md',
]);

/** The README first, then every docs/*.md in alphabetical order: the order a reader follows them in. */
async function documents(): Promise<Doc[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((name) => name.endsWith('.md') && !RUN_ELSEWHERE.has(name)).sort().map((name) => `docs/${name}`);
  return Promise.all(['README.md', ...docs].map(async (path) => ({ path, text: await readFile(join(ROOT, path), 'utf8') })));
}

const docs = await documents();
const readme = (docs[0] as Doc).text;
const temp = tempDirs('book-catalogue-readme-');
/** Separates the shell's output into blocks and output groups; no example prints it. */
const SEP = '\x1e';
/** Generous: the examples talk to a local service, but the machine may be loaded. */
const RUN_TIMEOUT_MS = 180_000;

after(async () => {
  await killAll();
  await temp.removeAll();
});

/**
 * A directory that looks like a fresh clone to the examples: the checkout's files (linked, with the
 * built dist/ and node_modules/), but its own `data/` holding only `.gitkeep` at git's usual 0755,
 * no `.env`, and `book-catalogue` on PATH as `npm install --global` would put it.
 */
async function freshClone(): Promise<{ dir: string; bin: string }> {
  const dir = await temp.make();
  for (const name of await readdir(ROOT)) {
    if (name === 'data' || name === '.git' || name === '.env' || name.endsWith('.tgz')) continue;
    await symlink(join(ROOT, name), join(dir, name));
  }
  await mkdir(join(dir, 'data'));
  await chmod(join(dir, 'data'), 0o755);
  await writeFile(join(dir, 'data', '.gitkeep'), '');
  const bin = join(dir, '.readme-bin');
  await mkdir(bin);
  await writeFile(join(bin, 'book-catalogue'), `#!/bin/sh\nexec '${process.execPath}' '${MAIN}' "$@"\n`, { mode: 0o755 });
  return { dir, bin };
}

/** A runnable block and the document it is in. */
interface DocBlock extends RunnableBlock {
  doc: string;
}

interface Script {
  text: string;
  /** Where each script line came from, `docs/api.md line 12` (1-based script lines; index 0 unused). */
  origins: string[];
  blocks: DocBlock[];
}

/**
 * One bash script for every runnable block, in document order. The examples talk to port 8080; the
 * service under test has an ephemeral port, so `localhost:8080` and `127.0.0.1:8080` are rewritten
 * to it. A command that fails is reported on fd 3, except curl's timeout (28) on a command with
 * `--max-time`: that is how a stream example ends.
 */
function buildScript(port: number): Script {
  const origins = [''];
  const out: string[] = [];
  const add = (text: string, origin: string): void => {
    out.push(text);
    origins.push(origin);
  };
  add('exec 2>&1', 'the script');
  add(
    `trap '__s=$?; if ! { [ "$__s" -eq 28 ] && [[ "$BASH_COMMAND" == *--max-time* ]]; }; then printf "%s\\t%s\\t%s\\n" "$LINENO" "$__s" "$BASH_COMMAND" >&3; fi' ERR`,
    'the script',
  );
  const blocks: DocBlock[] = [];
  for (const doc of docs) {
    for (const fence of fences(doc.text)) {
      if (fence.lang !== 'sh' || isSkipped(fence)) continue;
      const b = blocks.length;
      const block = { ...runnable(fence, (g) => `printf '${SEP}out ${b} ${g}${SEP}'`), doc: doc.path };
      blocks.push(block);
      add(`printf '${SEP}block ${b}${SEP}'`, where(block, block.line));
      for (const line of block.lines) add(line.text.replace(/\b(localhost|127\.0\.0\.1):8080\b/g, `$1:${port}`), where(block, line.line));
      add(`printf '${SEP}end ${b}${SEP}'`, where(block, block.line));
    }
  }
  return { text: `${out.join('\n')}\n`, origins, blocks };
}

const where = (block: DocBlock, line: number): string => `${block.doc} line ${line}`;

interface ShellRun {
  output: string;
  failures: string;
  timedOut: boolean;
}

function runShell(script: string, cwd: string, bin: string): Promise<ShellRun> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd,
      detached: true,
      env: { PATH: [bin, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter), HOME: process.env.HOME ?? cwd, LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let output = '';
    let failures = '';
    let timedOut = false;
    child.stdout?.setEncoding('utf8').on('data', (s: string) => (output += s));
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (output += s));
    (child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8').on('data', (s: string) => (failures += s));
    const timer = setTimeout(() => {
      timedOut = true;
      process.kill(-(child.pid as number), 'SIGKILL');
    }, RUN_TIMEOUT_MS);
    child.on('close', () => {
      clearTimeout(timer);
      resolve({ output, failures, timedOut });
    });
  });
}

/** Every difference between what the documents show and what their examples printed, one line each. */
function problems(script: Script, run: ShellRun): string[] {
  const found: string[] = [];
  for (const line of run.failures.split('\n').filter(Boolean)) {
    const [scriptLine, status, command] = line.split('\t');
    found.push(`${script.origins[Number(scriptLine)] ?? 'line ?'}: exit status ${status}: ${command}`);
  }
  const parts = run.output.split(SEP);
  let block = -1;
  let lastMarker = 'the start';
  const seen = new Set<string>();
  for (let i = 1; i < parts.length; i += 2) {
    const marker = parts[i] as string;
    const before = parts[i - 1] as string;
    const [kind, b, g] = marker.split(' ');
    lastMarker = marker;
    seen.add(marker);
    if (kind === 'block') block = Number(b);
    if (kind === 'out') {
      const shownIn = script.blocks[block] as DocBlock;
      const group = shownIn.outputs[Number(g)];
      if (group !== undefined && !matchesShown(group.expected, before)) {
        const hint = before.endsWith('\n') ? '' : ' (no newline at the end: curl needs -w \'\\n\')';
        found.push(`${where(shownIn, group.line)}: shows\n${group.expected.join('\n')}\nbut the commands above it printed${hint}\n${before}`);
      }
    }
  }
  if (run.timedOut) found.push(`the examples did not finish within ${RUN_TIMEOUT_MS / 1000} s; the last marker was ${lastMarker}; after it:\n${parts.at(-1)}`);
  script.blocks.forEach((blockInfo, b) => {
    if (!seen.has(`end ${b}`) && !run.timedOut) found.push(`the block at ${where(blockInfo, blockInfo.line)} did not run to its end; output after ${lastMarker}:\n${parts.at(-1)}`);
  });
  return found;
}

describe('the examples of the README and docs/*.md, in order, against a fresh service', () => {
  let service: RunningService;
  let clone: { dir: string; bin: string };

  it("a fresh clone's first start prints exactly what Quick start shows, and stdout holds JSON lines only", async () => {
    clone = await freshClone();
    service = await startMain({ cwd: clone.dir, args: ['--port', '0', '--host', '127.0.0.1'], env: { HOME: process.env.HOME ?? clone.dir } });
    const shown = fences(readme).find((f) => f.above.includes('what a first start prints'));
    assert.ok(shown, 'Quick start shows the first start');
    await outputMatching(service, 'stderr', /Set AUTH_PASSWORD.*\n/);
    const { stdout, stderr } = service.output();
    for (const line of stdout.split('\n').filter(Boolean)) assert.doesNotThrow(() => JSON.parse(line), `a JSON line: ${line}`);
    // The README shows the default start (all interfaces, port 8080); tests listen on loopback only.
    const printed = (stderr + stdout).replaceAll(`http://127.0.0.1:${service.port}`, 'http://[::]:8080').replaceAll(`"port":${service.port}`, '"port":8080');
    assert.ok(matchesShown(shown.lines, printed), `Quick start shows\n${shown.lines.join('\n')}\nbut the first start printed\n${printed}`);
  });

  it('every ```sh block runs and prints what its document shows under each command', async () => {
    const script = buildScript(service.port);
    const running = new Set(script.blocks.map((b) => b.doc));
    assert.ok(script.blocks.filter((b) => b.doc === 'README.md').length >= 4, 'at least the walk-through blocks of the README run');
    for (const doc of ['docs/api.md', 'docs/operations.md', 'docs/page.md']) assert.ok(running.has(doc), `the examples of ${doc} run`);
    await writeFile(join(clone.dir, '.readme-examples.sh'), script.text);
    const run = await runShell(script.text, clone.dir, clone.bin);
    assert.deepEqual(problems(script, run), []);
  });

  it('the service then stops cleanly on Ctrl-C (SIGINT)', async () => {
    const exit = await service.stop('SIGINT');
    assert.equal(exit.code, 0, exit.stderr);
  });
});

describe('how the examples are read', () => {
  const fence = (lines: string[], above = ''): Parameters<typeof runnable>[0] => ({ lang: 'sh', line: 10, lines, above });

  it('a whole-line comment under a command is its output; after a blank line or at the start, a note', () => {
    const block = runnable(fence(['# a note', 'echo a', '# a', '# b', '', '# note', 'echo c   # trailing note', '# c']), (g) => `MARK ${g}`);
    assert.deepEqual(
      block.outputs.map((o) => o.expected),
      [['a', 'b'], ['c']],
    );
    assert.deepEqual(
      block.lines.map((l) => l.text),
      ['# a note', 'echo a', 'MARK 0', '', '# note', 'echo c   # trailing note', 'MARK 1'],
    );
    assert.equal(block.outputs[0]?.line, 12);
  });

  it('… and ... match any text within a line, a line of … any lines; the trailing newline counts', () => {
    assert.ok(matchesShown(['{"id":…}'], '{"id":3}\n'));
    assert.ok(matchesShown(['a...b'], 'a--b\n'));
    assert.ok(!matchesShown(['{"id":…}'], '{"id":3}'), 'an answer without its newline is not what a terminal shows');
    assert.ok(matchesShown(['first', '…', 'last'], 'first\nx\ny\nlast\n'));
    assert.ok(matchesShown(['first', '…', 'last'], 'first\nlast\n'));
    assert.ok(!matchesShown(['a'], 'a\nb\n'));
  });

  it('a block is skipped only with a `<!-- not run` comment right above its fence', () => {
    const [run, skipped] = fences('```sh\necho 1\n```\n<!-- not run: starts the service -->\n```sh\necho 2\n```\n');
    assert.equal(run !== undefined && isSkipped(run), false);
    assert.equal(skipped !== undefined && isSkipped(skipped), true);
    assert.deepEqual(skipped?.lines, ['echo 2']);
    assert.equal(skipped?.line, 6);
  });

  it('a fence indented under a list item is a block too, its lines without that indent', () => {
    const [nested] = fences('- a step:\n\n  ```sh\n  echo 1\n    echo 2\n  ```\nafter\n');
    assert.equal(nested?.lang, 'sh');
    assert.deepEqual(nested?.lines, ['echo 1', '  echo 2']);
    assert.equal(nested?.line, 4);
  });
});
