import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { hash } from 'node:crypto';
import { fdatasync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { crc32 } from 'node:zlib';
import { AnswerFramer } from '../bench/answer-framer.ts';
import { createFloorServer } from '../bench/floor.ts';
import { Arrivals, streamScanner } from '../bench/fanout-scan.ts';
import { LatencyHistogram } from '../bench/histogram.ts';
import { runLoad, type LoadResult } from '../bench/load.ts';
import { httpRequest, SCENARIOS, seedBook } from '../bench/scenarios.ts';
import { parseWrkOutput } from '../bench/wrk.ts';
import { startApp, TEST_PASSWORD, TEST_USER } from './helpers/app.ts';
import { rawRequest } from './helpers/raw.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

const CONNECTIONS = 4;

describe('bench: the load generator keeps exact books', () => {
  let server: Server;
  let answered = 0;
  let result: LoadResult;

  before(async () => {
    // Three kinds of answer: small, 404 with header names in odd case, and a body written in two parts.
    server = createServer((req, res) => {
      answered++;
      if (req.url === '/missing') {
        res.writeHead(404, { 'Content-LENGTH': '2' });
        res.end('{}');
      } else if (req.url === '/split') {
        res.writeHead(200, { 'content-length': '10', 'x-padding': 'y'.repeat(4000) });
        res.write('01234');
        setImmediate(() => res.end('56789'));
      } else {
        res.writeHead(200, { 'content-length': '2' });
        res.end('ok');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const requests = ['/ok', '/missing', '/split'].map((path) => httpRequest('GET', path, '127.0.0.1', {}));
    result = await runLoad({ host: '127.0.0.1', port, connections: CONNECTIONS, durationMs: 300, warmupMs: 100, requests });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('every answer the server sent is counted once: warm-up, measured or drained', () => {
    assert.equal(result.warmupRequests + result.requests + result.drainedRequests, answered);
    assert.ok(result.requests > 0);
  });

  it('no errors against a server that answers every request', () => {
    assert.equal(result.errors, 0);
  });

  it('status counts add up to the measured answers and follow the request cycle', () => {
    const statuses = result.statuses;
    assert.deepEqual(Object.keys(statuses).sort(), ['200', '404']);
    assert.equal((statuses['200'] ?? 0) + (statuses['404'] ?? 0), result.requests);
    // Each connection cycles ok, missing, split: one 404 for every two 200s, give or take a cycle per connection.
    assert.ok(Math.abs((statuses['200'] ?? 0) - 2 * (statuses['404'] ?? 0)) <= 2 * CONNECTIONS);
  });

  it('one latency sample per measured answer, ordered percentiles', () => {
    assert.equal(result.count, result.requests);
    assert.ok(result.p50Ms > 0 && result.p50Ms <= result.p99Ms && result.p99Ms <= result.maxMs);
  });

  it('req/s is the measured answers over the measured window', () => {
    assert.equal(result.requestsPerSecond, (result.requests * 1000) / result.elapsedMs);
  });
});

describe('bench: latency histogram', () => {
  it('percentiles of 1..1000 µs are exact below 1024 µs', () => {
    const h = new LatencyHistogram();
    for (let us = 1; us <= 1000; us++) h.record(us);
    assert.equal(h.count, 1000);
    assert.equal(h.quantileMicros(0.5), 500);
    assert.equal(h.quantileMicros(0.99), 990);
    assert.equal(h.summary().maxMs, 1);
  });

  it('large values keep three significant digits', () => {
    const h = new LatencyHistogram();
    h.record(123_456);
    h.record(9_876_543);
    const p50 = h.quantileMicros(0.5);
    assert.ok(Math.abs(p50 - 123_456) / 123_456 < 0.001, String(p50));
    assert.equal(h.quantileMicros(1), 9_876_543);
  });

  it('reset forgets every sample', () => {
    const h = new LatencyHistogram();
    h.record(5);
    h.reset();
    assert.deepEqual(h.summary(), { count: 0, p50Ms: 0, p99Ms: 0, maxMs: 0 });
  });
});

describe('bench: wrk output', () => {
  it('reads req/s, percentiles in any unit, non-2xx and socket errors', () => {
    const text = `Running 5s test @ http://127.0.0.1:1234
  1 threads and 32 connections
  Latency Distribution
     50%  418.00us
     75%  600.00us
     90%    1.02ms
     99%    2.50ms
  354224 requests in 5.00s, 52.70MB read
  Socket errors: connect 0, read 2, write 1, timeout 0
  Non-2xx or 3xx responses: 354224
Requests/sec:  70842.00
Transfer/sec:     10.54MB
`;
    assert.deepEqual(parseWrkOutput(text), { requests: 354224, requestsPerSecond: 70842, p50Ms: 0.418, p99Ms: 2.5, non2xx: 354224, socketErrors: 3 });
  });
});

describe('bench: the answer framer', () => {
  // A body, one in odd case with spaces before its length, one of length 0, one with no Content-Length.
  const answers = [
    'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello',
    'HTTP/1.1 404 Not Found\r\nContent-LENGTH:   12\r\nx-padding: yy\r\n\r\n{"a":"\r\n\r\n"}',
    'HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n',
    'HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n',
    'HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}',
  ];
  const bytes = Buffer.from(answers.join(''), 'latin1');
  /** Where each answer ends in `bytes`. */
  const ends = answers.map((_, i) => Buffer.byteLength(answers.slice(0, i + 1).join(''), 'latin1'));

  it('calls back once per answer, with its status, as its last byte is read, wherever the reads split the bytes', () => {
    for (let a = 0; a <= bytes.length; a++) {
      for (let b = a; b <= bytes.length; b++) {
        const seen: string[] = [];
        const framer = new AnswerFramer((status) => seen.push(status));
        framer.read(bytes.subarray(0, a));
        framer.read(bytes.subarray(a, b));
        assert.equal(seen.length, ends.filter((end) => end <= b).length, `reads split at ${a} and ${b}`);
        framer.read(bytes.subarray(b));
        assert.deepEqual(seen, ['200', '404', '204', '304', '201'], `reads split at ${a} and ${b}`);
      }
    }
  });
});

describe('bench: the fan-out subscriber scans every frame of a chunked stream', () => {
  // What the service writes: one HTTP/1.1 chunk (RFC 9112 §7.1) of whole SSE frames per send.
  const frame = (id: number): string => `id: ${id}\nevent: created\ndata: ${JSON.stringify({ seq: id, type: 'created', id, book: { id, title: 'Fin', author: 'Ivi' } })}\n\n`;
  const chunk = (text: string): Buffer => Buffer.concat([Buffer.from(`${Buffer.byteLength(text).toString(16)}\r\n`), Buffer.from(text), Buffer.from('\r\n')]);
  const sends = [[1], [2, 3], [4, 5, 6], [7], [8, 9]];
  const stream = (ids: number[][]): Buffer => Buffer.concat(ids.map((send, i) => chunk((i === 2 ? ': heartbeat\n\n' : '') + send.map(frame).join(''))));

  it('counts each frame once and no break, wherever the reads split the bytes (each read in one reused buffer, as the child reads)', () => {
    const bytes = stream(sends);
    const readBuffer = Buffer.alloc(bytes.length);
    for (let a = 0; a <= bytes.length; a++) {
      for (let b = a; b <= bytes.length; b += 5) {
        const arrivals = new Arrivals();
        const scan = streamScanner(arrivals, 1);
        for (const read of [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]) {
          readBuffer.fill(0);
          scan(readBuffer.subarray(0, read.copy(readBuffer)));
        }
        assert.deepEqual([arrivals.frames, arrivals.breaks], [9, 0], `reads split at ${a} and ${b}`);
      }
    }
  });

  it('counts a read that does not continue its stream as a break', () => {
    const arrivals = new Arrivals();
    const scan = streamScanner(arrivals);
    scan(stream([[1, 2]]));
    scan(stream([[4]]));
    scan(stream([[4]]));
    assert.equal(arrivals.breaks, 2);
  });

  it('counts a gap, a repeat or a reorder inside a read as a break when it checks that read frame by frame', () => {
    for (const inside of [[1, 2, 4], [1, 2, 2, 3], [1, 3, 2, 4]]) {
      const byEnds = new Arrivals();
      streamScanner(byEnds, 2)(stream([inside]));
      assert.equal(byEnds.breaks, 0, 'a read it does not check frame by frame: first and last id only');
      const byFrame = new Arrivals();
      streamScanner(byFrame, 1)(stream([inside]));
      assert.equal(byFrame.breaks, 1, JSON.stringify(inside));
    }
  });
});

describe('bench: flags', () => {
  /** Every bench script, and one of its numeric flags. */
  const NUMERIC_FLAG: Readonly<Record<string, string>> = {
    'bench/run.ts': 'rounds',
    'bench/compare.ts': 'rounds',
    'bench/store.ts': 'ops',
    'bench/store-writes.ts': 'writers',
    'bench/fanout.ts': 'duration',
    'bench/scale.ts': 'duration',
    'bench/list-after-writes.ts': 'books',
    'bench/binary.ts': 'starts',
    'bench/slow-lists.ts': 'readers',
    'bench/compression.ts': 'rounds',
    'bench/paired.ts': 'pairs',
    'bench/searches.ts': 'clients',
    'bench/in-process.ts': 'rounds',
    'bench/profile-summary.ts': 'top',
  };
  const run = (script: string, ...args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: new URL('..', import.meta.url).pathname, encoding: 'utf8' });

  for (const [script, flag] of Object.entries(NUMERIC_FLAG)) {
    it(`${script} --help prints its usage and exits 0`, () => {
      const result = run(script, '--help');
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, /^(npm run|node --import tsx) bench/);
    });

    it(`${script} with a numeric flag given something else says so in one line and exits 2`, () => {
      const result = run(script, `--${flag}`, 'abc');
      assert.equal(result.status, 2);
      assert.match(result.stderr, new RegExp(`^Option '--${flag}' takes (a whole number from 1|a number above 0), not 'abc'\n`));
    });

    it(`${script} with an unknown flag says so in one line and exits 2, no stack trace`, () => {
      const result = run(script, '--no-such-flag');
      assert.equal(result.status, 2);
      assert.match(result.stderr, /^Unknown option '--no-such-flag'/);
      assert.doesNotMatch(result.stderr, /\n\s+at /);
    });
  }

  it('bench/searches.ts given its round length under the name it had (--seconds) names --duration in one line and exits 2', () => {
    for (const args of [['--seconds', '15'], ['--seconds=15']]) {
      const result = run('bench/searches.ts', ...args);
      assert.equal(result.status, 2);
      assert.match(result.stderr, /^Option '--seconds' is named '--duration' now\n/);
    }
  });

  it('npm run bench names fanout among its scenarios, and refuses it with --baseline (its ratio compares a build with itself)', () => {
    assert.match(run('bench/run.ts', '--no-build', '--scenarios', 'nope').stderr, /^bench: unknown scenario nope \(known: .*, fanout\)\n$/);
    const result = run('bench/run.ts', '--no-build', '--scenarios', 'fanout', '--baseline', 'dist');
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^bench: fanout takes no --baseline/);
  });

  it('npm run bench refuses --floor-vs-ceiling with --floor or --baseline, and fanout with it (the floor serves no event stream)', () => {
    for (const other of [['--floor'], ['--baseline', 'dist']]) {
      const result = run('bench/run.ts', '--no-build', '--floor-vs-ceiling', ...other, '--scenarios', 'nope');
      assert.equal(result.status, 1);
      assert.match(result.stderr, /^bench: --floor-vs-ceiling takes no --floor or --baseline[^\n]*\n$/);
    }
    const fanout = run('bench/run.ts', '--no-build', '--floor-vs-ceiling', '--scenarios', 'fanout');
    assert.equal(fanout.status, 1);
    assert.match(fanout.stderr, /^bench: fanout takes no --floor-vs-ceiling/);
  });

  it('npm run bench refuses --floor with --baseline in one line (each names what the service is measured against)', () => {
    // An unknown scenario as well, so that a run.ts without the check stops there rather than measuring.
    const result = run('bench/run.ts', '--no-build', '--floor', '--baseline', 'dist', '--scenarios', 'nope');
    assert.equal(result.status, 1);
    assert.match(result.stderr, /^bench: --floor takes no --baseline: [^\n]+\n$/);
  });
});

describe('bench: the floor answers each scenario as the contract asks', () => {
  const dirs = tempDirs('floor-');
  after(() => dirs.removeAll());
  /** One request's answer on a fresh connection (helpers/raw.ts), without Date and connection management. */
  const exchange = async (port: number, request: Buffer): Promise<{ status: number; headers: Record<string, string> }> => {
    const { status, headers } = await rawRequest(port, request);
    for (const name of ['date', 'connection', 'keep-alive']) delete headers[name];
    return { status, headers };
  };
  /** Fields whose value is the same for every answer of a route; the others (length, id, tag, location) differ by content. */
  const FIXED = ['content-type', 'cache-control', 'x-content-type-options', 'vary', 'www-authenticate'];

  const listening = async (floor: Server): Promise<number> => {
    await new Promise<void>((resolve) => floor.listen(0, '127.0.0.1', resolve));
    return (floor.address() as AddressInfo).port;
  };
  const closed = async (floor: Server & { closeJournal(): void }): Promise<void> => {
    await new Promise((resolve) => floor.close(resolve));
    floor.closeJournal();
  };

  it('the status and the header fields of the service\'s answer, for every scenario of npm run bench, with a fresh request id each time', async () => {
    const app = await startApp({ logLevel: 'silent' });
    const floor = createFloorServer(await dirs.make());
    const floorPort = await listening(floor);
    try {
      // The bench's 100 books: a list of them is long enough to vary by Accept-Encoding, as list-100's does.
      for (let i = 0; i < 100; i++) await app.request('POST', '/book', { body: seedBook(i) });
      const ctx = { host: '127.0.0.1', token: app.token(), username: TEST_USER, password: TEST_PASSWORD, bookIds: [1] };
      for (const scenario of SCENARIOS) {
        const request = scenario.build(ctx)[0] as Buffer;
        const [service, floorAnswer] = [await exchange(app.port, request), await exchange(floorPort, request)];
        assert.equal(service.status, scenario.expectedStatus, scenario.name);
        assert.equal(floorAnswer.status, service.status, scenario.name);
        assert.deepEqual(Object.keys(floorAnswer.headers).sort(), Object.keys(service.headers).sort(), scenario.name);
        for (const name of FIXED) assert.equal(floorAnswer.headers[name], service.headers[name], `${scenario.name}: ${name}`);
        assert.equal(floorAnswer.headers.etag?.match(/^"[\w-]+"$/)?.[0], floorAnswer.headers.etag, scenario.name);
      }
      const url = `http://127.0.0.1:${floorPort}/book/1`;
      const authorized = { headers: { authorization: 'Bearer x' } };
      const [first, second] = [await fetch(url, authorized), await fetch(url, authorized)];
      assert.notEqual(first.headers.get('x-request-id'), second.headers.get('x-request-id'));
    } finally {
      await closed(floor);
      await app.close();
    }
  });

  it('a write is answered only once the fdatasync of its record returned, tagged with the SHA-256 of its JSON; no token is a 401 and a body that is not JSON a 400', async () => {
    const dir = await dirs.make();
    const held: (() => void)[] = [];
    const floor = createFloorServer(dir, (fd, done) => held.push(() => fdatasync(fd, done)));
    const url = `http://127.0.0.1:${await listening(floor)}`;
    const write = (method: string, path: string, body: string, token = true): Promise<Response> =>
      fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', ...(token && { authorization: 'Bearer x' }) }, body });
    try {
      let answered = false;
      const creating = write('POST', '/book', '{"title":"T","author":"A","year":2001}').then((res) => {
        answered = true;
        return res;
      });
      while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const record = '1 {"id":1,"title":"T","author":"A","year":2001}';
      assert.equal(await readFile(join(dir, 'floor-journal'), 'utf8'), `${record} ${crc32(record)}\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(answered, false, 'answered before its record was made durable');
      (held.shift() as () => void)();
      const created = await creating;
      assert.equal(created.status, 201);
      assert.equal(created.headers.get('location'), '/book/1');
      assert.equal(created.headers.get('etag'), `"${hash('sha256', '{"id":1,"title":"T","author":"A","year":2001}', 'base64url')}"`);
      assert.equal((await write('PUT', '/book/1', '{}', false)).status, 401);
      assert.equal((await write('PUT', '/book/1', 'not json')).status, 400);
    } finally {
      for (const release of held) release();
      await closed(floor);
    }
  });
});

describe('bench: in-process rounds', () => {
  it('each target answers every request with the status its scenario expects, counted per round', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/in-process.ts', '--targets', 'ceiling,floor', '--scenarios', 'read-one', '--rounds', '1', '--answers', '500'], {
      cwd: new URL('..', import.meta.url).pathname,
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /\| read-one \| ceiling \| [0-9.]+ \| [0-9.]+ \+ [0-9.]+ \| 1\.00 \| \{"200":500\} \|/);
    assert.match(result.stdout, /\| read-one \| floor \| [0-9.]+ \| [0-9.]+ \+ [0-9.]+ \| [0-9.]+ \| \{"200":500\} \|/);
  });
});
