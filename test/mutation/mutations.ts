/**
 * Changes to the source that a test must notice (`npm run mutate`, docs/development.md, "Mutation
 * check"): each breaks one behaviour the contract or SECURITY.md promises, and names the test files
 * that should fail because of it.
 */
export interface Mutation {
  /** The behaviour it breaks, as the report names it. */
  readonly name: string;
  /** The file it changes, from the repository's root. */
  readonly file: string;
  /** Text that occurs exactly once in the file. */
  readonly from: string;
  /** What replaces it. */
  readonly to: string;
  /** The test files that should fail: only these run. */
  readonly tests: readonly string[];
  /** A `--test-name-pattern` narrowing them to the tests that should fail, so a mutant takes seconds. */
  readonly only?: string;
  /**
   * Why it may survive: an equivalent mutant, or a behaviour nothing outside can observe. A
   * survivor without a reason fails the run.
   */
  readonly why?: string;
}

/** The mutated text of `m.file`; throws when `m.from` does not occur exactly once (the list has gone stale). */
export function mutate(text: string, m: Mutation): string {
  const at = text.indexOf(m.from);
  if (at === -1 || text.indexOf(m.from, at + 1) !== -1) {
    throw new Error(`${m.file}: the snippet of "${m.name}" occurs ${at === -1 ? 'nowhere' : 'more than once'}; update test/mutation/mutations.ts`);
  }
  return text.slice(0, at) + m.to + text.slice(at + m.from.length);
}

export const MUTATIONS: readonly Mutation[] = [
  {
    name: 'the open-connections gauge is never decremented',
    file: 'src/metrics/catalogue-metrics.ts',
    from: 'closed: () => open.dec()',
    to: 'closed: () => {}',
    tests: ['test/metrics.test.ts'],
    only: 'open connections are a gauge',
  },
  {
    name: 'the drain leaves taken-over sockets open',
    file: 'src/http/server.ts',
    from: '  guard.closeTakenOver();\n',
    to: '',
    tests: ['test/taken-over-sockets.test.ts'],
    only: 'the drain closes taken-over sockets',
  },
  {
    name: 'the event stream head lacks X-Accel-Buffering: no',
    file: 'src/events/sse.ts',
    from: "    'x-accel-buffering',\n    'no',\n",
    to: '',
    tests: ['test/events.test.ts'],
    only: 'streams each durable create',
  },
  {
    name: 'a search ignores after',
    file: 'src/books/search.ts',
    from: '        if (idAt(text, start + BOOK_START.length) <= options.after) continue;\n',
    to: '',
    tests: ['test/list-pages.test.ts'],
    only: 'a search across index pages',
  },
  {
    name: 'the event stream sends no heartbeat',
    file: 'src/events/event-stream.ts',
    from: 'if (!this.#ended && !this.#waiting) this.#write(HEARTBEAT);',
    to: '',
    tests: ['test/events.test.ts'],
    only: 'heartbeat',
  },
];
