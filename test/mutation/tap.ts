/** A test that failed, as `node --test --test-reporter=tap` reports it. */
export interface FailedTest {
  readonly name: string;
  /** Its error, the first two lines of it that hold text (assert's generic line, then the values). */
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
      if (err !== null && error === '') error = err[1] === '|-' ? blockText(lines, j + 1, indent + 4) : (err[1] as string).replace(/^'(.*)'$/, '$1');
    }
    if (failureType === 'subtestsFailed' || failureType === 'cancelledByParent') continue;
    failed.push({ name: m[2] as string, error, timedOut: failureType === 'testTimeoutFailure' });
  }
  return failed;
}

/** A YAML block scalar's lines (indented `indent`) from `from`: the first two that hold text, joined. */
function blockText(lines: readonly string[], from: number, indent: number): string {
  const text: string[] = [];
  for (let i = from; i < lines.length && text.length < 2; i++) {
    const line = lines[i] as string;
    if (line.trim() !== '' && !line.startsWith(' '.repeat(indent))) break;
    if (line.trim() !== '') text.push(line.trim());
  }
  return text.join(' ');
}
