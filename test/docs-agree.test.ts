import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { EVENT_STREAM_DEFAULTS } from '../src/events/stream-registry.ts';
import { ALLOW_HEADERS, EXPOSE_HEADERS } from '../src/http/cors.ts';
import type { Parameter, Response, ResponseRef } from '../src/http/openapi-types.ts';
import { OPENAPI_DOCUMENT } from '../src/service/openapi-document.ts';
import { section } from './helpers/markdown-sections.ts';

const read = (path: string): Promise<string> => readFile(new URL(`../${path}`, import.meta.url), 'utf8');

/**
 * Every name a text writes in its code spans (code blocks aside): `A` alone, each entry of `A, B, C`
 * (a header list), and both sides of `Name: value`.
 */
function codeNames(text: string): Set<string> {
  const names = new Set<string>();
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/\s+/g, ' ');
  for (const [, span] of prose.matchAll(/`([^`]+)`/g)) {
    for (const entry of (span as string).split(',')) for (const part of entry.split(': ')) names.add(part.trim());
  }
  return names;
}

const responses = (): (Response | ResponseRef)[] => [
  ...Object.values(OPENAPI_DOCUMENT.paths).flatMap((item) => Object.values(item).flatMap((op) => Object.values(op.responses))),
  ...Object.values(OPENAPI_DOCUMENT.components.responses),
];

/** Every header the OpenAPI document names: on an answer, or as a request header parameter. */
function documentedHeaders(): Set<string> {
  const names = new Set<string>();
  for (const response of responses()) for (const name of Object.keys(response.headers ?? {})) names.add(name);
  for (const item of Object.values(OPENAPI_DOCUMENT.paths)) {
    for (const op of Object.values(item)) for (const p of (op.parameters ?? []) as Parameter[]) if (p.in === 'header') names.add(p.name);
  }
  return names;
}

/** Every (status, message) pair of an envelope answer in the OpenAPI document. */
function documentedAnswers(): Set<string> {
  const pairs = new Set<string>();
  for (const response of responses()) {
    const schema = response.content?.['application/json']?.schema;
    const status = schema?.properties?.status?.const;
    const message = schema?.properties?.message;
    if (status === undefined || message === undefined) continue;
    for (const text of message.enum ?? [message.const as string]) pairs.add(`${status} ${text}`);
  }
  return pairs;
}

describe('docs/contract.md, docs/api.md, the README and the OpenAPI document say the same', () => {
  it('every header the OpenAPI document names is written out in docs/contract.md and docs/api.md', async () => {
    const headers = documentedHeaders();
    assert.ok(headers.size >= 15, `only ${headers.size} headers found: ${[...headers].join(', ')}`);
    for (const doc of ['docs/contract.md', 'docs/api.md']) {
      const names = codeNames(await read(doc));
      const missing = [...headers].filter((h) => !names.has(h));
      assert.deepEqual(missing, [], `${doc} never names these headers the OpenAPI document has`);
    }
  });

  it('the CORS headers allowed and exposed are listed, all of them, where contract.md and api.md describe CORS', async () => {
    const texts = { 'docs/contract.md': section(await read('docs/contract.md'), '## Cross-origin requests'), 'docs/api.md': section(await read('docs/api.md'), '## CORS') };
    for (const [doc, text] of Object.entries(texts)) {
      const names = codeNames(text);
      for (const [list, value] of Object.entries({ allowed: ALLOW_HEADERS, exposed: EXPOSE_HEADERS })) {
        const missing = value.split(', ').filter((h) => !names.has(h));
        assert.deepEqual(missing, [], `${doc} leaves out headers CORS has ${list}`);
      }
    }
  });

  it("GET /events' retry field is the one docs and the document give", async () => {
    const field = `retry: ${EVENT_STREAM_DEFAULTS.retryMs}`;
    for (const doc of ['docs/contract.md', 'docs/api.md']) assert.ok((await read(doc)).includes(field), `${doc} does not say ${field}`);
    const description = OPENAPI_DOCUMENT.paths['/events']?.get?.description ?? '';
    assert.ok(description.includes(field), `GET /events' operation does not say ${field}`);
  });

  it("every status and message the OpenAPI document gives is a pair in contract.md's Messages table and in the README", async () => {
    const pairs = documentedAnswers();
    assert.ok(pairs.size >= 30, `only ${pairs.size} answers found`);
    const table = section(await read('docs/contract.md'), '## Messages');
    const readme = await read('README.md');
    for (const pair of pairs) {
      const [status, ...words] = pair.split(' ');
      const message = words.join(' ');
      assert.ok(table.includes(`| ${status} | \`${message}\` |`), `contract.md, "Messages" has no row ${status} \`${message}\``);
      assert.ok(readme.includes(`| ${status} | \`${message}\` |`) || readme.includes(`${status} \`${message}\``), `README.md never gives ${status} \`${message}\``);
    }
  });
});
