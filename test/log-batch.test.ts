import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { batchLines } from '../src/log.ts';
import { killAll, startMain } from './helpers/process.ts';

describe('log lines are batched per event-loop turn (request logging stays cheap at info)', () => {
  it('lines written in one turn reach the sink as one chunk, in order, at the end of the turn', async () => {
    const chunks: string[] = [];
    const batch = batchLines((chunk) => chunks.push(chunk));
    batch.write('a\n');
    batch.write('b\n');
    batch.write('c\n');
    assert.deepEqual(chunks, [], 'nothing is written during the turn');
    await nextTurn();
    assert.deepEqual(chunks, ['a\nb\nc\n']);
    batch.write('d\n');
    await nextTurn();
    assert.deepEqual(chunks, ['a\nb\nc\n', 'd\n']);
  });

  it('flush hands on what is pending at once, and nothing twice', async () => {
    const chunks: string[] = [];
    const batch = batchLines((chunk) => chunks.push(chunk));
    batch.write('a\n');
    batch.flush();
    assert.deepEqual(chunks, ['a\n']);
    await nextTurn();
    batch.flush();
    assert.deepEqual(chunks, ['a\n']);
  });

  it('past maxChars the pending lines are written at once', () => {
    const chunks: string[] = [];
    const batch = batchLines((chunk) => chunks.push(chunk), 10);
    batch.write('12345\n');
    batch.write('67890\n');
    assert.deepEqual(chunks, ['12345\n67890\n']);
  });
});

describe('the CLI loses no log line on exit', () => {
  let cwd: string;
  const env = { AUTH_PASSWORD: 'log-batch-password', SECRET_TOKEN: 'log-batch-secret-that-is-32-bytes-long!!' };
  before(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'book-catalogue-log-batch-'));
  });
  after(async () => {
    await killAll();
    await rm(cwd, { recursive: true, force: true });
  });

  it('one request line per request is on stdout when the process exits after SIGTERM', async () => {
    const service = await startMain({ cwd, env, args: ['--host', '127.0.0.1', '--port', '0', '--data-dir', join(cwd, 'a')] });
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => fetch(`${service.url}/healthz`, { headers: { 'x-request-id': `batch-${i}` } })));
    assert.ok(answers.every((r) => r.status === 200));
    const exit = await service.stop();
    assert.equal(exit.code, 0, exit.stderr);
    const ids = exit.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; reqId?: string })
      .filter((l) => l.msg === 'request' && l.reqId?.startsWith('batch-') === true);
    assert.equal(ids.length, 40);
    assert.match(exit.stdout, /"msg":"stopped cleanly"/);
  });

  it('a second signal exits at once, and the lines already written are still on stdout', async () => {
    const service = await startMain({ cwd, env, args: ['--host', '127.0.0.1', '--port', '0', '--data-dir', join(cwd, 'b')] });
    service.child.kill('SIGTERM');
    service.child.kill('SIGINT');
    const exit = await service.exited;
    // Whichever signal is handled first starts the drain; the other exits with its code (or the drain won).
    assert.ok([0, 130, 143].includes(exit.code ?? -1), `exit code ${exit.code}`);
    assert.match(exit.stdout, /"msg":"SIG(TERM|INT) received: finishing requests in flight, then exiting"/);
  });
});
