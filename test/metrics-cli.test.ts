import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseCommand, type Config } from '../src/cli/config.ts';
import { RETAINED_CHANGES } from '../src/store/change-log.ts';
import { openStore } from '../src/store/open.ts';
import { killAll, metricsPortOf, outputMatching, startMain } from './helpers/process.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { within } from './helpers/wait.ts';

const ENV = { SECRET_TOKEN: 'metrics-cli-secret-that-is-32-bytes-long', AUTH_PASSWORD: 'metrics-cli-password' };

function config(argv: string[], env: Record<string, string> = {}): Config {
  const command = parseCommand({ argv, env });
  assert.equal(command.kind, 'serve');
  return (command as { config: Config }).config;
}

describe('METRICS_PORT / --metrics-port', () => {
  const dirs = tempDirs('book-catalogue-metrics-cli-');
  after(async () => {
    await killAll();
    await dirs.removeAll();
  });

  it('is off by default; METRICS_HOST defaults to 127.0.0.1; the flag wins over the environment', () => {
    assert.equal(config([]).metrics, undefined);
    assert.equal(config([], { METRICS_HOST: '0.0.0.0' }).metrics, undefined);
    assert.deepEqual(config([], { METRICS_PORT: '9464' }).metrics, { port: 9464, host: '127.0.0.1' });
    assert.deepEqual(config(['--metrics-port', '9500', '--metrics-host', '::1'], { METRICS_PORT: '9464', METRICS_HOST: '10.0.0.1' }).metrics, { port: 9500, host: '::1' });
    assert.throws(() => config(['--metrics-port', '70000']), /invalid port/);
  });

  it('the service serves /metrics on its own listener only, and says where', async () => {
    const cwd = await dirs.make();
    const service = await startMain({ cwd, args: ['--port', '0', '--host', '127.0.0.1', '--metrics-port', '0', '--data-dir', 'data'], env: ENV });
    try {
      const line = service
        .output()
        .stdout.split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; metricsPort?: number })
        .find((l) => l.metricsPort !== undefined);
      assert.ok(line, service.output().stdout);
      assert.match(line.msg, /^metrics on http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      const scrape = await fetch(`http://127.0.0.1:${line.metricsPort}/metrics`);
      assert.equal(scrape.status, 200);
      assert.equal(scrape.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
      const text = await scrape.text();
      assert.match(text, /^book_catalogue_build_info\{version="\d+\.\d+\.\d+",node="v[\d.]+"\} 1$/m);
      assert.ok(!text.includes(ENV.SECRET_TOKEN) && !text.includes(ENV.AUTH_PASSWORD));
      const publicAnswer = await fetch(`${service.url}/metrics`);
      assert.equal(publicAnswer.status, 404);
      assert.equal(((await publicAnswer.json()) as { message: string }).message, 'Not found');
      // The scrape is logged through the service's logger, its line naming the listener.
      const scrapeLine = /^\{[^\n]*"listener":"metrics","reqId":"[^"]+","method":"GET","path":"\/metrics","statusCode":200,/m;
      await within('the scrape\'s request line', outputMatching(service, 'stdout', scrapeLine));
    } finally {
      const exit = await service.stop();
      assert.equal(exit.code, 0, exit.stderr);
    }
  });

  it('the store and the app draw from one memory budget: changes recovered beyond the last 10,000 show on the app\'s retained_changes gauge', async () => {
    const cwd = await dirs.make();
    // A journal with more than RETAINED_CHANGES changes and no snapshot: recovery keeps them all.
    const store = await openStore(join(cwd, 'data'), { compaction: { minBytes: Number.MAX_SAFE_INTEGER } });
    await store.create({ title: 'One book', author: 'A', year: 2000 });
    for (let done = 0; done < RETAINED_CHANGES + 500; done += 500) {
      await Promise.all(Array.from({ length: 500 }, (_, i) => store.update(1, { year: (done + i) % 9999 })));
    }
    await store.close();
    const service = await startMain({ cwd, args: ['--port', '0', '--host', '127.0.0.1', '--metrics-port', '0', '--data-dir', 'data'], env: ENV });
    try {
      const metricsPort = metricsPortOf(service);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const held = /^book_catalogue_memory_held_bytes\{consumer="retained_changes"\} (\d+)$/m.exec(text);
      assert.ok(Number(held?.[1]) > 0, `the app's budget sees the store's retained changes: ${held?.[0]}`);
    } finally {
      const exit = await service.stop();
      assert.equal(exit.code, 0, exit.stderr);
    }
  });

  it('the memory budget is MEMORY_BUDGET_MB, else a quarter of the JavaScript heap limit at most 256 MiB: a smaller heap gets a smaller budget', async () => {
    const budgetOf = async (env: Record<string, string>): Promise<number> => {
      const service = await startMain({ cwd: await dirs.make(), args: ['--port', '0', '--host', '127.0.0.1', '--metrics-port', '0', '--data-dir', 'data'], env: { ...ENV, ...env } });
      try {
        const metricsPort = metricsPortOf(service);
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        return Number(/^book_catalogue_memory_budget_bytes (\d+)$/m.exec(text)?.[1]);
      } finally {
        const exit = await service.stop();
        assert.equal(exit.code, 0, exit.stderr);
      }
    };
    const MIB = 1024 * 1024;
    assert.equal(await budgetOf({ MEMORY_BUDGET_MB: '10' }), 10 * MIB);
    // A 256 MiB old space makes a heap limit of 300 to 450 MiB, with the young generation the Node
    // line sizes: a budget of a quarter of that.
    const small = await budgetOf({ NODE_OPTIONS: '--max-old-space-size=256' });
    assert.ok(small > 50 * MIB && small <= 128 * MIB, `budget with a 256 MiB old space: ${small / MIB} MiB`);
    const large = await budgetOf({ NODE_OPTIONS: '--max-old-space-size=4096' });
    assert.equal(large, 256 * MIB, 'the default stops at 256 MiB');
  });
});
