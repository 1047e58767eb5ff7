import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { startApp, type TestApp } from './helpers/app.ts';
import { npmExec, type NpmExecResult } from './helpers/npm-tools.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/**
 * Problems the linters may report that are accepted, each with its reason. Anything else, error or
 * warning, fails the test. Keep it short: a new entry needs a reason a client writer would accept.
 */
const ACCEPTED: readonly { tool: 'redocly' | 'openapi-parser'; rule: string; reason: string }[] = [];

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

/** The tool's result, or the skip: one line on stderr saying what was skipped and how to get it. */
function ranOrSkip(t: TestContext, result: NpmExecResult): Extract<NpmExecResult, { kind: 'ran' }> | undefined {
  if (result.kind === 'ran') return result;
  process.stderr.write(`${result.line}\n`);
  t.skip(result.line);
  return undefined;
}

const accepted = (tool: (typeof ACCEPTED)[number]['tool'], rule: string): boolean => ACCEPTED.some((a) => a.tool === tool && a.rule === rule);

/**
 * The document as served, through real OpenAPI tooling: what client generators and stateful
 * testers read. Each tool is fetched and run once per run (helpers/npm-tools.ts).
 */
describe('GET /openapi.json passes a real OpenAPI linter and validator', () => {
  const temp = tempDirs('openapi-lint-');
  let app: TestApp;
  let file: string;
  before(async () => {
    app = await startApp();
    const res = await app.request('GET', '/openapi.json', { auth: false });
    assert.equal(res.status, 200);
    file = join(await temp.make(), 'openapi.json');
    await writeFile(file, res.text);
  });
  after(async () => {
    await app.close();
    await temp.removeAll();
  });

  it('redocly lint (recommended rules): no error or warning but the accepted ones', async (t) => {
    const env = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const ran = ranOrSkip(t, await npmExec('redocly', ['redocly', 'lint', '--format=json', file], env));
    if (ran === undefined) return;
    let report: RedoclyReport;
    try {
      report = JSON.parse(ran.stdout) as RedoclyReport;
    } catch {
      assert.fail(`redocly lint printed no JSON report (exit ${ran.code}):\n${ran.stderr}`);
    }
    const problems = report.problems.filter((p) => !accepted('redocly', p.ruleId)).map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    assert.deepEqual(problems, []);
  });

  it('@readme/openapi-parser validate: valid, no warning but the accepted ones', async (t) => {
    const script = join(import.meta.dirname, 'fixtures', 'openapi-validate.ts');
    const ran = ranOrSkip(t, await npmExec('openapiParser', [process.execPath, '--import', 'tsx', script, file]));
    if (ran === undefined) return;
    assert.equal(ran.code, 0, ran.stderr);
    const result = JSON.parse(ran.stdout) as { valid: boolean; errors: { message: string }[]; warnings: { message: string }[] };
    const found = [...result.errors, ...result.warnings].map((f) => f.message).filter((m) => !accepted('openapi-parser', m));
    assert.deepEqual(found, []);
    assert.equal(result.valid, true);
  });
});
