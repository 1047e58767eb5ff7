import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { MESSAGES } from '../src/http/messages.ts';

const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');

describe('README stays true', () => {
  it('the embedding example is docs/embedding-example.ts, unchanged', async () => {
    const example = await readFile(new URL('../docs/embedding-example.ts', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Embedding as a library'));
    const block = /```ts\n([\s\S]*?)```/.exec(section);
    assert.ok(block, 'the section has a ts code block');
    assert.equal(block[1], example);
  });

  it('every environment variable the CLI reads is in the configuration table', async () => {
    const config = await readFile(new URL('../src/cli/command.ts', import.meta.url), 'utf8');
    const vars = new Set([...config.matchAll(/env\('([A-Z_]+)'\)/g)].map((m) => m[1] as string));
    assert.ok(vars.size >= 5, `found ${[...vars].join(', ')}`);
    for (const name of vars) assert.ok(readme.includes(`\`${name}\``), `${name} is documented`);
  });

  it('every message the service can send is in the errors or API section', () => {
    for (const message of Object.values(MESSAGES)) assert.ok(readme.includes(`\`${message}\``), `${message} is documented`);
  });
});
