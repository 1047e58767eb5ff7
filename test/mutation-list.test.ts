import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { mutate, MUTATIONS } from './mutation/mutations.ts';
import { failedTests } from './mutation/tap.ts';

const ROOT = new URL('../', import.meta.url);
const read = (file: string): string => readFileSync(new URL(file, ROOT), 'utf8');

/** The names a test file gives its suites and tests, as written (a template's `${…}` left in). */
function testNames(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\b(?:describe|it|check)\(\s*(['"`])((?:\\.|(?!\1)[^\\])*)\1/g)) names.push((m[2] as string).replace(/\\(.)/g, '$1'));
  return names;
}

/*
 * `npm run mutate` (docs/development.md, "Mutation check") runs the mutants of
 * test/mutation/mutations.ts; this keeps its list applicable as the code moves on, so that the
 * check never quietly tests less than it names.
 */
describe('the mutation list', () => {
  for (const m of MUTATIONS) {
    it(`${m.name}: its snippet occurs once in ${m.file}, and its tests exist and name what they narrow to`, () => {
      const mutated = mutate(read(m.file), m);
      assert.notEqual(mutated, read(m.file));
      for (const test of m.tests) assert.ok(existsSync(new URL(test, ROOT)), `${test} exists`);
      if (m.only !== undefined) {
        const pattern = new RegExp(m.only);
        assert.ok(
          m.tests.some((test) => testNames(read(test)).some((name) => pattern.test(name))),
          `--test-name-pattern ${JSON.stringify(m.only)} names a test or suite of ${m.tests.join(', ')}`,
        );
      }
    });
  }

  it('names are unique, so that a run narrowed by a word picks what it says', () => {
    const names = MUTATIONS.map((m) => m.name);
    assert.deepEqual(names.filter((n, i) => names.indexOf(n) !== i), []);
  });

  it("the runner reads a failed test, its error and a timeout from node's TAP report, leaving out suites that only hold failures", () => {
    const tap = [
      '# Subtest: a suite',
      '    # Subtest: holds',
      '    not ok 1 - holds',
      '      ---',
      "      failureType: 'testCodeFailure'",
      '      error: |-',
      '        Expected values to be strictly equal:',
      '        ',
      '        1 !== 0',
      '        ',
      '      code: ERR_ASSERTION',
      '      ...',
      '    # Subtest: waits',
      '    not ok 2 - waits',
      '      ---',
      "      failureType: 'testTimeoutFailure'",
      "      error: 'test timed out after 60000ms'",
      '      ...',
      'not ok 1 - a suite',
      '  ---',
      "  failureType: 'subtestsFailed'",
      "  error: '2 subtests failed'",
      '  ...',
    ].join('\n');
    assert.deepEqual(failedTests(tap), [
      { name: 'holds', error: 'Expected values to be strictly equal: 1 !== 0', timedOut: false },
      { name: 'waits', error: 'test timed out after 60000ms', timedOut: true },
    ]);
  });
});
