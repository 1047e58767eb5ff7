import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';
import { USAGE } from '../src/cli/config.ts';
import { ANSWERS } from '../src/http/messages.ts';
import { MemoryBudget } from '../src/memory/budget.ts';
import { createMetrics } from '../src/metrics/catalogue-metrics.ts';
import { INSTALLED_EXAMPLE } from './helpers/embedding.ts';
import { section } from './helpers/markdown-sections.ts';

const ROOT = join(import.meta.dirname, '..');
const read = (path: string): Promise<string> => readFile(join(ROOT, path), 'utf8');
const readme = await read('README.md');

/** The rows of the first Markdown table in `text`, each as its cells (the header and rule lines left out). */
function tableRows(text: string): string[][] {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => l.startsWith('|'));
  assert.ok(first !== -1, 'there is a table');
  const rows: string[][] = [];
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.slice(1, -1).split(' | ').map((cell) => cell.trim()));
  }
  return rows;
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces to `-`. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

async function markdownFiles(): Promise<string[]> {
  const docs = (await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`);
  return ['README.md', 'SECURITY.md', ...docs];
}

describe('README stays true', () => {
  it('the configuration table has every environment variable and flag the CLI reads (src/cli/config.ts)', async () => {
    const command = await read('src/cli/config.ts');
    const table = tableRows(section(readme, '## Configuration'));
    const vars = new Set([...command.matchAll(/env\('([A-Z_]+)'\)/g), ...USAGE.matchAll(/\benv ([A-Z_]+)\b|^ {2}([A-Z_]{2,})\s/gm)].map((m) => (m[1] ?? m[2]) as string));
    const flags = new Set([...USAGE.matchAll(/^ {2}(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1] as string).filter((f) => f !== '--help' && f !== '--version'));
    assert.ok(vars.size >= 15 && flags.size >= 9, `found ${[...vars].join(', ')} and ${[...flags].join(', ')}`);
    for (const name of vars) assert.ok(table.some((row) => row[1] === `\`${name}\``), `${name} has a row`);
    for (const flag of flags) assert.ok(table.some((row) => (row[2] ?? '').startsWith(`\`${flag}\``)), `${flag} is in a row`);
  });

  it('every message the service can send is in the README with its status', () => {
    for (const { status, message } of Object.values(ANSWERS)) {
      const escaped = message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.ok(new RegExp(`\\b${status}(?: \\||) \`${escaped}\``).test(readme), `${status} \`${message}\` is documented`);
    }
  });

  it('the page says which Node lines are supported, as package.json and CI have them', async () => {
    const pkg = JSON.parse(await read('package.json')) as { engines: { node: string }; scripts: Record<string, string> };
    const quickStart = section(readme, '## Quick start').replace(/\s+/g, ' ');
    assert.ok(quickStart.includes(`Node.js ${pkg.engines.node.replace('>=', '')} or newer`), pkg.engines.node);
    const ci = await read('.ci/run');
    for (const line of ['24', '26']) {
      assert.ok(pkg.scripts[`test:node${line}`]?.includes(`node@${line}`) && ci.includes(`npm run test:node${line}`), `CI runs Node ${line}`);
    }
    assert.match(quickStart, /CI runs the whole suite on Node 20, 24 and 26/);
  });

  it('Quick start says how to use another port; the walk-through reads the token with jq first, with Node as the fallback', () => {
    const quickStart = section(readme, '## Quick start').replace(/\s+/g, ' ');
    for (const way of ['`--port 3000`', '`PORT=3000`', '`.env`']) assert.ok(quickStart.includes(way), `Quick start: ${way}`);
    const walk = section(readme, '## Walk-through with curl');
    const jq = walk.indexOf('| jq -r .data.token)');
    const node = walk.indexOf('.data.token\')');
    assert.ok(jq !== -1 && node !== -1 && jq < node, 'jq -r .data.token, then the node -p fallback');
  });

  it('SECURITY.md and docs/development.md say the same Node lines as the README: the minimum of engines, the lines CI runs, the lines for production', async () => {
    const pkg = JSON.parse(await read('package.json')) as { engines: { node: string } };
    const minimum = pkg.engines.node.replace('>=', '');
    const pages = {
      README: section(readme, '## Quick start'),
      'SECURITY.md': section(await read('SECURITY.md'), '## Threat model'),
      'docs/development.md': section(await read('docs/development.md'), '## Supported Node.js lines'),
    };
    for (const [page, text] of Object.entries(pages)) {
      const flat = text.replace(/\s+/g, ' ');
      assert.ok(flat.includes(`Node.js ${minimum} or newer`), `${page}: Node.js ${minimum} or newer`);
      assert.ok(flat.includes('CI runs the whole suite on Node 20, 24 and 26'), `${page}: the lines CI runs`);
      assert.match(flat, /production should run \**Node 24 or 26/i, `${page}: the lines for production`);
    }
  });
});

describe('docs/ stays true', () => {
  it('docs/embedding.md shows docs/embedding-example.mjs unchanged', async () => {
    const example = await read('docs/embedding-example.mjs');
    const page = section(await read('docs/embedding.md'), '## The example');
    const block = /```js\n([\s\S]*?)```/.exec(page);
    assert.ok(block, 'the section has a js code block');
    assert.equal(block[1], example);
  });

  it('docs/embedding.md and the README give the command that runs the example from an installed package', async () => {
    const command = `node ${INSTALLED_EXAMPLE}`;
    assert.ok(section(await read('docs/embedding.md'), '## The example').includes(command), `docs/embedding.md: ${command}`);
    assert.ok(section(readme, '## Embedding as a library').includes(command), `README: ${command}`);
  });

  it("docs/operations.md's metrics table lists every family the service exposes", async () => {
    const metrics = createMetrics();
    metrics.watchEventStreams(() => 0);
    metrics.watchMemoryBudget(new MemoryBudget(1024 * 1024));
    const exposed = [...metrics.registry.expose().matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string);
    metrics.close();
    const listed = new Set(tableRows(section(await read('docs/operations.md'), '## Metrics')).map((row) => (row[0] ?? '').replaceAll('`', '')));
    assert.ok(exposed.length >= 25, `exposed: ${exposed.join(', ')}`);
    assert.deepEqual(
      exposed.filter((name) => !listed.has(name)),
      [],
      'families without a row',
    );
    assert.deepEqual(
      [...listed].filter((name) => !exposed.includes(name)),
      [],
      'rows without a family',
    );
  });

  it('every relative link between the documents leads to a file, and every #anchor to a heading there', async () => {
    const broken: string[] = [];
    const headings = new Map<string, Set<string>>();
    const anchorsOf = async (path: string): Promise<Set<string>> => {
      let found = headings.get(path);
      if (found === undefined) {
        const text = (await read(path)).replace(/^```[\s\S]*?^```/gm, '');
        found = new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf((m[1] as string).replaceAll('`', ''))));
        headings.set(path, found);
      }
      return found;
    };
    const files = await markdownFiles();
    for (const doc of files) {
      const text = (await read(doc)).replace(/^```[\s\S]*?^```/gm, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1] as string;
        if (/^[a-z]+:/i.test(target)) continue;
        const [file, anchor] = target.split('#') as [string, string | undefined];
        const path = file === '' ? doc : normalize(join(dirname(doc), file));
        try {
          if (anchor !== undefined && !(await anchorsOf(path)).has(anchor)) broken.push(`${doc} → ${target}: no such heading`);
          else await read(path);
        } catch {
          broken.push(`${doc} → ${target}: no such file`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });

  it('every `docs/<page>.md, "Section"` that the code, tests and benches cite is a heading of that page', async () => {
    const sources = async (dir: string): Promise<string[]> =>
      (await readdir(join(ROOT, dir), { recursive: true })).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));
    let cited = 0;
    const missing: string[] = [];
    for (const file of (await Promise.all(['src', 'test', 'bench', 'fuzz'].map(sources))).flat()) {
      for (const m of (await read(file)).matchAll(/docs\/([a-z-]+\.md), \\?"([^"\\]+)\\?"/g)) {
        if (m[1] === 'contract.md') continue; // test/contract-doc.test.ts holds those
        cited++;
        const headings = [...(await read(`docs/${m[1]}`)).matchAll(/^#{2,6} (.+)$/gm)].map((h) => h[1] as string);
        if (!headings.includes(m[2] as string)) missing.push(`${file}: docs/${m[1]}, "${m[2]}"`);
      }
    }
    assert.ok(cited >= 5, `only ${cited} citations found`);
    assert.deepEqual(missing, []);
  });

  it('no document cites issue numbers, engineers, reviewers or "this machine"', async () => {
    for (const doc of await markdownFiles()) {
      const text = await read(doc);
      assert.doesNotMatch(text, /\bissues? \d|\bthis machine\b|\bthis (?:project's )?[\w-]* ?VM\b|\bengineers?\b|\breviewers?\b/i, doc);
    }
  });
});
