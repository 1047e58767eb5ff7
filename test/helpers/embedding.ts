import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { loginToken } from './login.ts';

export const EXAMPLE_PASSWORD = 'embedding-example-password';
const EXAMPLE_SECRET = 'embedding-example-secret-of-32-bytes!!';

/**
 * The example's path in a project that installed the package: docs/embedding.md and the README give
 * `node` this path, and test/package.test.ts runs it so from a project that installed the tarball.
 */
export const INSTALLED_EXAMPLE = 'node_modules/book-catalogue/docs/embedding-example.mjs';

/**
 * Runs the embedding example of docs/embedding.md (`command args`, from `cwd`) on port 0 with
 * `dataDir`, drives it over HTTP as a reader of that page would, stops it with SIGTERM and checks it
 * exited 0 on its own. Resolves with what it wrote to stdout.
 */
export async function exerciseEmbeddingExample(command: string, args: readonly string[], cwd: string, dataDir: string): Promise<string> {
  const child = spawn(command, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', PORT: '0', DATA_DIR: dataDir, SECRET_TOKEN: EXAMPLE_SECRET, CATALOGUE_PASSWORD: EXAMPLE_PASSWORD },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const base = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      const found = /catalogue at (http:\/\/\S+)\n/.exec(stdout);
      if (found !== null) resolve(found[1] as string);
    });
    void exited.then((code) => reject(new Error(`example exited (${code}) before listening: ${stderr}`)));
  });
  try {
    const host = await fetch(new URL('/', base));
    assert.equal(await host.text(), 'the host application\n', 'other paths stay the host application\'s');
    const headers = { authorization: `Bearer ${await loginToken(base, EXAMPLE_PASSWORD, 'librarian')}` };
    const created = await fetch(`${base}/book`, { method: 'POST', headers, body: JSON.stringify({ title: 'Dune', author: 'Frank Herbert', year: 1965 }) });
    assert.equal(created.status, 201);
    const list = (await (await fetch(`${base}/books`, { headers })).json()) as { data: unknown };
    assert.deepEqual(list.data, [{ id: 1, title: 'Dune', author: 'Frank Herbert', year: 1965 }]);
    // A client that follows the next-page link (RFC 8288, resolved against the request's URL) stays in the catalogue.
    const emma = await fetch(`${base}/book`, { method: 'POST', headers, body: JSON.stringify({ title: 'Emma', author: 'Jane Austen', year: 1815 }) });
    assert.equal(emma.status, 201);
    const first = await fetch(`${base}/books?limit=1`, { headers });
    const next = /^<([^>]+)>; rel="next"$/.exec(first.headers.get('link') ?? '');
    assert.ok(next !== null, 'the first page links to the next');
    const second = (await (await fetch(new URL(next[1] as string, first.url), { headers })).json()) as { data: unknown };
    assert.deepEqual(second.data, [{ id: 2, title: 'Emma', author: 'Jane Austen', year: 1815 }]);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, `the example stops cleanly on SIGTERM: ${stderr}`);
  assert.equal(stderr, '', 'nothing logged at warn or above');
  return stdout;
}
