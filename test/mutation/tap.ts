/** A test that failed, as `node --test --test-reporter=tap` reports it. */
export interface FailedTest {
  readonly name: string;
  /** The first line of its error. */
  readonly error: string;
  /** It ran past its timeout (`--test-timeout`) instead of failing an assertion. */
  readonly timedOut: boolean;
}

const NOT_OK = /^(\s*)not ok \d+ - (.*?)(?: # .*)?$/;

/**
 * The failed tests of a TAP report that failed themselves: a suite whose subtests failed
 * (`subtestsFailed`) and a test cancelled with its file (`cancelledByParent`) name no failure of
 * their own, so they are left out.
 */
export function failedTests(tap: string): FailedTest[] {
  const lines = tap.split('\n');
  const failed: FailedTest[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = NOT_OK.exec(lines[i] as string);
    if (m === null) continue;
    const indent = (m[1] as string).length;
    let failureType = '';
    let error = '';
    // Its YAML block: indented two more, up to the line `...`.
    for (let j = i + 1; j < lines.length; j++) {
      const line = (lines[j] as string).slice(indent + 2);
      if (line === '...') break;
      const type = /^failureType: '(.*)'$/.exec(line);
      if (type !== null) failureType = type[1] as string;
      const err = /^error: (.*)$/.exec(line);
      if (err !== null && error === '') error = err[1] === '|-' ? ((lines[j + 1] as string | undefined) ?? '').trim() : (err[1] as string).replace(/^'(.*)'$/, '$1');
    }
    if (failureType === 'subtestsFailed' || failureType === 'cancelledByParent') continue;
    failed.push({ name: m[2] as string, error, timedOut: failureType === 'testTimeoutFailure' });
  }
  return failed;
}
