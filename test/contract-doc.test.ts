import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { OPENAPI_DOCUMENT } from '../src/service/openapi-document.ts';

const ROOT = join(import.meta.dirname, '..');

async function sourceFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await sourceFiles(path)));
    else if (entry.name.endsWith('.ts')) found.push(path);
  }
  return found;
}

/** The section names of docs/contract.md: its `## ` headings. */
async function sections(): Promise<Set<string>> {
  const text = await readFile(join(ROOT, 'docs/contract.md'), 'utf8');
  return new Set(text.split('\n').filter((line) => line.startsWith('## ')).map((line) => line.slice(3)));
}

/** Every `docs/contract.md, "A" and "B"` citation's section names. */
function citedSections(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(/docs\/contract\.md,((?:\s*(?:and|,)?\s*\\?"[^"\\]+\\?")+)/g)) {
    for (const name of (match[1] as string).matchAll(/\\?"([^"\\]+)\\?"/g)) names.push(name[1] as string);
  }
  return names;
}

describe('docs/contract.md is what the code and the OpenAPI document cite', () => {
  it('no source, test or document text cites decisions.md or the spec by section, neither of which is in the repository', async () => {
    const texts = [JSON.stringify(OPENAPI_DOCUMENT)];
    for (const dir of ['src', 'test', 'fuzz', 'bench']) {
      for (const file of await sourceFiles(join(ROOT, dir))) {
        if (!file.endsWith('contract-doc.test.ts')) texts.push(await readFile(file, 'utf8'));
      }
    }
    for (const text of texts) {
      assert.doesNotMatch(text, /decisions\.md|spec §[0-9]/);
    }
  });

  it('every section the code and the document cite exists', async () => {
    const known = await sections();
    let cited = 0;
    const texts = [JSON.stringify(OPENAPI_DOCUMENT)];
    for (const file of await sourceFiles(join(ROOT, 'src'))) texts.push(await readFile(file, 'utf8'));
    for (const text of texts) {
      for (const name of citedSections(text)) {
        cited++;
        assert.ok(known.has(name), `docs/contract.md has no section "${name}"`);
      }
    }
    assert.ok(cited >= 20, `only ${cited} citations found`);
  });

  it('states every envelope message the service can send', async () => {
    const { MESSAGES } = await import('../src/http/messages.ts');
    const text = await readFile(join(ROOT, 'docs/contract.md'), 'utf8');
    for (const message of Object.values(MESSAGES)) assert.ok(text.includes(`\`${message}\``), message);
  });
});
