import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { allTestFiles, plan, QUICK, SERIAL } from './suite-plan.ts';

/** What a quick file may not import: each starts a process, a browser or a system program. */
const SPAWNING = ['node:child_process', './helpers/process.ts', './helpers/browser.ts', './helpers/promtool.ts', './helpers/npm-tools.ts', './helpers/embedding.ts', './helpers/readme-blocks.ts'];

describe('the suite plan (test/run.ts runs it)', () => {
  it('npm test runs every test file exactly once, the serial ones in a batch of their own', () => {
    const files = allTestFiles();
    const batches = plan('all', files);
    const planned = batches.flatMap((b) => b.files);
    assert.deepEqual([...planned].sort(), files.map((f) => `test/${f}`).sort());
    assert.equal(new Set(planned).size, planned.length, 'no file twice');
    const serial = batches.find((b) => b.concurrency === 1)?.files ?? [];
    assert.deepEqual([...serial], Object.keys(SERIAL).sort().map((f) => `test/${f}`));
  });

  it('a name in the plan that no file has fails the plan, naming it', () => {
    const renamed = QUICK[0] as string;
    const files = allTestFiles().filter((f) => f !== renamed);
    assert.throws(() => plan('all', files), { message: `test/suite-plan.ts names ${renamed}, which is not in test/` });
  });

  it('the quick files start no process, browser or system program', async () => {
    const found: string[] = [];
    for (const file of QUICK) {
      const text = await readFile(new URL(file, import.meta.url), 'utf8');
      for (const module of SPAWNING) if (text.includes(`'${module}'`)) found.push(`${file} imports ${module}`);
    }
    assert.deepEqual(found, []);
  });
});
