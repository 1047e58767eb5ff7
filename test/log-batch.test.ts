import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { batchLines } from '../src/log.ts';
import { killAll, outputMatching, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { within } from './helpers/wait.ts';

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
  const temp = tempDirs('book-catalogue-log-batch-');
  let cwd: string;
  const env = { AUTH_PASSWORD: 'log-batch-password', SECRET_TOKEN: 'log-batch-secret-that-is-32-bytes-long!!' };
  before(async () => {
    cwd = await temp.make();
  });
  after(async () => {
    await killAll();
    await temp.removeAll();
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
    // A request in flight keeps the drain from ending by itself: its 100 Continue proves the handler
    // is reading its body, which never comes, so only the second signal can end the process.
    const socket = connect(service.port, '127.0.0.1');
    socket.write('POST /token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50\r\nExpect: 100-continue\r\n\r\n');
    const [first] = (await within('the 100 Continue', once(socket.setEncoding('utf8'), 'data'))) as [string];
    assert.match(first, /^HTTP\/1\.1 100 Continue/);
    service.child.kill('SIGTERM');
    await outputMatching(service, 'stdout', /"msg":"SIGTERM received: finishing requests in flight, then exiting"/);
    service.child.kill('SIGINT');
    const exit = await within('the process exiting at the second signal', service.exited);
    socket.destroy();
    assert.equal(exit.code, 130, 'the second signal (SIGINT) ends the process with its own code, not the drain');
    assert.match(exit.stdout, /"msg":"SIGTERM received: finishing requests in flight, then exiting"/);
  });
});
