/**
 * Changes to the source that a test must notice (`npm run mutate`; docs/development.md, "Mutation check"):
 * each breaks one behaviour the contract or SECURITY.md promises (or, with a `why`, is known to
 * break none), and names the test files that should fail because of it.
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
  /** It changes the page (src/ui/page/), which the tests load from its build in dist/public/. */
  readonly buildsPage?: boolean;
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
    file: 'src/transport/http-server.ts',
    from: '  guard.closeTakenOver();\n',
    to: '',
    tests: ['test/taken-over-sockets.test.ts'],
    only: 'the drain closes taken-over sockets',
  },
  {
    name: 'the event stream head lacks X-Accel-Buffering: no',
    file: 'src/events/sse-frames.ts',
    from: "headers.push('referrer-policy', 'no-referrer', 'x-accel-buffering', 'no');",
    to: "headers.push('referrer-policy', 'no-referrer');",
    tests: ['test/events.test.ts'],
    only: 'streams each durable create',
  },
  {
    name: 'a search ignores after',
    file: 'src/books/search.ts',
    from: '  if (idAt(text, book.start + BOOK_START.length) <= found.after) return;\n',
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
  {
    name: 'the page reconnects to its feed without Last-Event-ID',
    file: 'src/ui/page/feed.ts',
    from: "  if (lastEventId !== '') headers['last-event-id'] = lastEventId;\n",
    to: '',
    tests: ['test/ui-live.test.ts'],
    buildsPage: true,
  },
  {
    name: 'the page shows an answer it has since asked past',
    file: 'src/ui/page/catalogue.ts',
    from: '    if (mine !== generation) return false;\n',
    to: '',
    tests: ['test/ui-live.test.ts'],
    buildsPage: true,
  },
  {
    name: 'the page keeps the search that hid a book it added',
    file: 'src/ui/page/catalogue.ts',
    from: "    if (done && cleared) store.update({ searchText: '' });\n",
    to: '',
    tests: ['test/ui-live.test.ts'],
    buildsPage: true,
  },
  // The memory budget (src/memory/budget.ts): who is shed first, and what a release frees.
  {
    name: 'retained changes are ranked like streams, not last',
    file: 'src/memory/budget.ts',
    from: "  if (account.consumer.kind === 'retained_changes') return 0;\n",
    to: '',
    tests: ['test/memory-budget.test.ts'],
  },
  {
    name: 'the budget sheds the largest consumer, whatever it moves',
    file: 'src/memory/budget.ts',
    from: '  return account.held / rate;',
    to: '  return account.held;',
    tests: ['test/memory-budget.test.ts'],
  },
  {
    name: 'a released charge stays counted',
    file: 'src/memory/budget.ts',
    from: '        if (account.released) return;\n        budget.#move(account, 0);',
    to: '        if (account.released) return;',
    tests: ['test/memory-budget.test.ts'],
  },
  {
    name: 'the budget sheds down to the limit exclusive',
    file: 'src/memory/budget.ts',
    from: 'while (this.#held > this.limit)',
    to: 'while (this.#held >= this.limit)',
    tests: ['test/memory-budget.test.ts'],
  },
  {
    name: 'the budget cuts a consumer that holds nothing',
    file: 'src/memory/budget.ts',
    from: 'if (account.held === 0 || asked.has(account)) continue;',
    to: 'if (asked.has(account)) continue;',
    tests: ['test/memory-budget.test.ts'],
  },
  {
    name: 'the budget asks a consumer that frees nothing again and again',
    file: 'src/memory/budget.ts',
    from: '        asked.add(victim);\n',
    to: '',
    tests: ['test/memory-budget.test.ts'],
  },
  {
    name: 'a report at exactly the limit starts a round of shedding',
    file: 'src/memory/budget.ts',
    from: 'if (budget.#held > budget.limit) budget.#shed();',
    to: 'if (budget.#held >= budget.limit) budget.#shed();',
    tests: ['test/memory-budget.test.ts'],
    why: 'equivalent: the round sheds only while the total is over the limit, so one started at exactly the limit asks no one',
  },
  {
    name: 'sheds are not counted',
    file: 'src/memory/budget.ts',
    from: '        this.#shedBy.set(kind, (this.#shedBy.get(kind) ?? 0) + 1);\n',
    to: '',
    tests: ['test/memory-budget.test.ts'],
  },
  // Per-address limits (src/transport/connection-guard.ts, client-addresses.ts, connection-events.ts).
  {
    name: 'one connection more than MAX_CONNECTIONS_PER_ADDRESS is admitted',
    file: 'src/transport/client-addresses.ts',
    from: 'load.connections >= max',
    to: 'load.connections > max',
    tests: ['test/per-address-limits.test.ts'],
    only: 'MAX_CONNECTIONS_PER_ADDRESS are closed on arrival',
  },
  {
    name: "a closed connection still counts against its address",
    file: 'src/transport/client-addresses.ts',
    from: 'if (--load.connections === 0)',
    to: 'if (load.connections - 1 === 0)',
    tests: ['test/per-address-limits.test.ts'],
    only: 'a closed connection frees its place',
  },
  {
    name: 'one request more than MAX_IN_FLIGHT_PER_ADDRESS may wait',
    file: 'src/transport/connection-guard.ts',
    from: 'load.inFlight >= maxInFlightPerAddress',
    to: 'load.inFlight > maxInFlightPerAddress',
    tests: ['test/per-address-limits.test.ts'],
    only: 'past MAX_IN_FLIGHT_PER_ADDRESS across its connections',
  },
  {
    name: 'an answered request still counts against its address',
    file: 'src/transport/connection-guard.ts',
    from: '  if (watched.load !== undefined && !watched.closed) watched.load.inFlight--;\n',
    to: '',
    tests: ['test/per-address-limits.test.ts'],
    only: 'an answered request frees its slot',
  },
  {
    name: 'a request without a token may be pipelined',
    file: 'src/transport/connection-guard.ts',
    from: 'if (this.#hasValidToken?.(req) === false)',
    to: 'if (false)',
    tests: ['test/per-address-limits.test.ts'],
    only: 'a request without a valid token may not be pipelined',
  },
  {
    name: 'a flood of refusals logs a line at the interval minus nothing',
    file: 'src/transport/connection-events.ts',
    from: 'if (at - lastLine < REFUSED_LOG_INTERVAL_MS) return;',
    to: 'if (at - lastLine <= REFUSED_LOG_INTERVAL_MS) return;',
    tests: ['test/metrics.test.ts'],
    only: 'a flood of refusals',
  },
  // The host check (src/transport/host-names.ts).
  {
    name: 'a .domain entry accepts no subdomain',
    file: 'src/transport/host-names.ts',
    from: '    for (const domain of domains) if (name.endsWith(domain)) return true;\n',
    to: '',
    tests: ['test/host-names.test.ts'],
    only: 'allowedHosts lists the names accepted',
  },
  {
    name: "a Host's port may hold anything",
    file: 'src/transport/host-names.ts',
    from: '    if (c < 48 || c > 57) return false;\n',
    to: '',
    tests: ['test/host-names.test.ts'],
    only: 'with the loopback default',
  },
  {
    name: 'an absolute-form target is checked by its Host header',
    file: 'src/transport/host-names.ts',
    from: '      return url.slice(scheme + 3, end);',
    to: '      return req.headers.host;',
    tests: ['test/host-names.test.ts'],
    only: 'an absolute-form target names the host',
  },
  {
    name: 'a service on loopback accepts any host by default',
    file: 'src/transport/host-names.ts',
    from: '  if (listenAddress === undefined || !isLoopbackAddress(listenAddress)) return undefined;',
    to: '  return undefined;',
    tests: ['test/host-names.test.ts'],
    only: 'the default for a listening address|with the loopback default',
  },
  // Preconditions (src/http/preconditions.ts).
  {
    name: 'If-Match compares weakly',
    file: 'src/http/preconditions.ts',
    from: "!names(ifMatch, etag, 'strong', alsoTagged)",
    to: "!names(ifMatch, etag, 'weak', alsoTagged)",
    tests: ['test/conditional-requests.test.ts'],
  },
  {
    name: 'HEAD with a matching If-None-Match is 412, not 304',
    file: 'src/http/preconditions.ts',
    from: "method === 'GET' || method === 'HEAD' ? 'not-modified'",
    to: "method === 'GET' ? 'not-modified'",
    tests: ['test/conditional-requests.test.ts'],
  },
  {
    name: 'a representation without a tag is named by nothing, * included',
    file: 'src/http/preconditions.ts',
    from: "if (etag === undefined) return trimOws(header) === '*';",
    to: 'if (etag === undefined) return false;',
    tests: ['test/conditional-requests.test.ts'],
  },
  // The id bound (src/store/batch.ts).
  {
    name: 'the last safe id is never given',
    file: 'src/store/batch.ts',
    from: 'plan.nextId > MAX_BOOK_ID',
    to: 'plan.nextId >= MAX_BOOK_ID',
    tests: ['test/id-space.test.ts'],
  },
  {
    name: 'a create gets an id past the last safe one',
    file: 'src/store/batch.ts',
    from: 'plan.nextId > MAX_BOOK_ID',
    to: 'plan.nextId > MAX_BOOK_ID + 1',
    tests: ['test/id-space.test.ts'],
  },
  // The journal's last-record rule (src/store/journal.ts).
  {
    name: 'a whole last record with a damaged newline is dropped as torn',
    file: 'src/store/journal.ts',
    from: 'for (const recordEnd of [end, end - 1])',
    to: 'for (const recordEnd of [end])',
    tests: ['test/journal-last-record.test.ts'],
  },
  {
    name: 'a torn last record stops startup',
    file: 'src/store/journal.ts',
    from: '      if (whole === undefined) return { lastSeq: expected - 1, goodLength: offset, unterminated: false, marked };',
    to: "      if (whole === undefined) throw new JournalDamage(offset, 'torn');",
    tests: ['test/journal-last-record.test.ts'],
  },
  {
    name: 'a kept last record gets no newline written back',
    file: 'src/store/journal.ts',
    from: 'return { lastSeq: expected, goodLength: whole.end, unterminated: true, marked };',
    to: 'return { lastSeq: expected, goodLength: whole.end, unterminated: false, marked };',
    tests: ['test/journal-last-record.test.ts'],
  },
  // Data-file checks (src/fs/data-file.ts).
  {
    name: 'a data file with a second name is trusted',
    file: 'src/fs/data-file.ts',
    from: '  if (status.nlink > rule.links) return',
    to: '  if (false) return',
    tests: ['test/data-files.test.ts'],
    only: 'second name',
  },
  {
    name: 'a group-writable data file is trusted',
    file: 'src/fs/data-file.ts',
    from: '  forbidden: 0o022,',
    to: '  forbidden: 0o002,',
    tests: ['test/data-files.test.ts'],
    only: 'group can write to',
  },
  {
    name: 'a data file that is not a regular file is opened',
    file: 'src/fs/data-file.ts',
    from: "  if (!status.isFile()) return 'is not a regular file';\n",
    to: '',
    tests: ['test/data-files.test.ts'],
    only: 'FIFO',
  },
  // Compaction backoff (src/store/compaction-failures.ts).
  {
    name: 'the compaction backoff does not double',
    file: 'src/store/compaction-failures.ts',
    from: 'this.#delay * 2',
    to: 'this.#delay',
    tests: ['test/compaction-failure.test.ts'],
    only: 'CompactionFailures',
  },
  {
    name: 'the compaction backoff has no cap',
    file: 'src/store/compaction-failures.ts',
    from: 'this.#delay = Math.min(this.#count === 1 ? retryMs : this.#delay * 2, maxRetryMs);',
    to: 'this.#delay = this.#count === 1 ? retryMs : this.#delay * 2;',
    tests: ['test/compaction-failure.test.ts'],
    only: 'CompactionFailures',
  },
  {
    name: 'readiness stays failing after a compaction succeeds',
    file: 'src/store/compaction-failures.ts',
    from: "    this.#logger.info('compaction works again', { failures: this.#count });\n    this.#count = 0;",
    to: "    this.#logger.info('compaction works again', { failures: this.#count });",
    tests: ['test/compaction-failure.test.ts'],
    only: 'CompactionFailures',
  },
  {
    name: 'every failed compaction is logged',
    file: 'src/store/compaction-failures.ts',
    from: '    if (left === undefined) return retryInMs;\n',
    to: '',
    tests: ['test/compaction-failure.test.ts'],
    only: 'CompactionFailures',
  },
  // Event tickets (src/auth/event-ticket.ts).
  {
    name: 'an expired ticket opens the stream',
    file: 'src/auth/event-ticket.ts',
    from: "  if (!(exp > nowSeconds)) throw new TokenError('expired');\n",
    to: '',
    tests: ['test/event-tickets.test.ts'],
  },
  {
    name: 'a ticket with a wrong MAC opens the stream',
    file: 'src/auth/event-ticket.ts',
    from: "  if (!valid) throw new TokenError('bad-signature');\n",
    to: '',
    tests: ['test/event-tickets.test.ts'],
  },
  {
    name: "a ticket is MACed with the signing key itself, not one derived for tickets",
    file: 'src/auth/event-ticket.ts',
    from: "  return createHmac('sha256', key).update(PURPOSE).digest();",
    to: '  return Buffer.from(key);',
    tests: ['test/event-tickets.test.ts'],
  },
  {
    name: 'a ticket made before a key rotation is refused',
    file: 'src/auth/event-ticket.ts',
    from: '  for (const key of keys.verifying) {',
    to: '  for (const key of [keys.signing]) {',
    tests: ['test/event-tickets.test.ts'],
  },
  // The progress floor of streamed answers (src/http/piecewise-body.ts).
  {
    name: 'a streamed answer below the progress floor is never cut',
    file: 'src/http/piecewise-body.ts',
    from: '    else cut(`its streamed answer',
    to: '    else void (`its streamed answer',
    tests: ['test/stream-progress.test.ts'],
    only: 'must keep up with the progress floor',
  },
  {
    name: 'a streamed answer gets no grace before the floor applies',
    file: 'src/http/piecewise-body.ts',
    from: 'const wait = started + floor.graceMs + (sent * 1000)',
    to: 'const wait = started + (sent * 1000)',
    tests: ['test/stream-progress.test.ts'],
    only: 'must keep up with the progress floor',
  },
  // list_snapshots accounting (src/store/list-readers.ts).
  {
    name: 'a superseded page is charged to the walk that lets it go first',
    file: 'src/store/list-readers.ts',
    from: 'holders.sort((a, b) => a.seconds - b.seconds);',
    to: 'holders.sort((a, b) => b.seconds - a.seconds);',
    tests: ['test/list-readers.test.ts'],
  },
  {
    name: "a page's charge ends with its payer, though other walks still hold it",
    file: 'src/store/list-readers.ts',
    from: '    if (text.holders > 0) {',
    to: '    if (false) {',
    tests: ['test/list-readers.test.ts'],
  },
  {
    name: 'a closed walk stays charged',
    file: 'src/store/list-readers.ts',
    from: '    this.account.set(0);\n',
    to: '',
    tests: ['test/list-readers.test.ts'],
  },
  {
    name: 'a walk opened on a state already superseded is charged nothing',
    file: 'src/store/list-readers.ts',
    from: '    if (walk.charged > 0) account.set(walk.charged);\n',
    to: '',
    tests: ['test/list-readers.test.ts'],
  },
];
