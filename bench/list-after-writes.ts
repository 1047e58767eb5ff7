/**
 * `npm run bench:list-after-writes`: the first GET /books after writes spread over every index page
 * (a list's cost to other requests must not grow with the catalogue: docs/performance.md, "Large catalogues"). The store alone, no
 * HTTP: a catalogue is written, one book in every page is updated, and the list snapshot is taken
 * while a 1 ms timer measures the longest event-loop gap. Per round: pages, time until the snapshot
 * is ready, longest gap. Options: --books 1000000 --rounds 3.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Book } from '../src/model/book.ts';
import { PAGE } from '../src/store/book-index.ts';
import { writeCatalogue } from '../src/store/catalogue-file.ts';
import { openStore } from '../src/store/open.ts';
import { benchFlags } from './flags.ts';

const USAGE = `npm run bench:list-after-writes [-- --books N --rounds R]
  --books N    catalogue size (default 1000000)
  --rounds R   rounds of "update one book per page, then list" (default 3)
`;
const flags = benchFlags(USAGE, { books: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } }, { books: 'count', rounds: 'count' });
const books = Number(flags.books);
const rounds = Number(flags.rounds);

/** Starts a 1 ms timer; the function it returns stops it and gives the longest gap between ticks. */
function longestGap(): () => number {
  let last = performance.now();
  let most = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    most = Math.max(most, now - last);
    last = now;
  }, 1);
  return () => {
    clearInterval(timer);
    return Math.max(most, performance.now() - last);
  };
}

const dir = await mkdtemp(join(tmpdir(), 'bench-list-after-writes-'));
try {
  const catalogue: Book[] = Array.from({ length: books }, (_, i) => ({ id: i + 1, title: `Book number ${i + 1}`, author: `Author ${i % 997}`, year: 1900 + (i % 120) }));
  await writeCatalogue(dir, catalogue);
  const store = await openStore(dir);
  console.log(`${books} books, node ${process.version}`);
  for (let round = 1; round <= rounds; round++) {
    const writes: Promise<unknown>[] = [];
    // One update at the index's page stride touches every page.
    for (let id = 1; id <= books; id += PAGE) writes.push(store.update(id, { title: `Round ${round}` }));
    await Promise.all(writes);
    await sleep(20);
    const stop = longestGap();
    const started = performance.now();
    const snapshot = await store.listSnapshot();
    const readyMs = performance.now() - started;
    await sleep(5);
    console.log(`round ${round}: ${writes.length} writes over ${snapshot.pages.length} pages, list ready in ${readyMs.toFixed(1)} ms, longest event-loop gap ${stop().toFixed(1)} ms`);
  }
  await store.close();
} finally {
  await rm(dir, { recursive: true, force: true });
}
