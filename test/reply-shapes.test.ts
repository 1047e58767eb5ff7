import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { signingKeys } from '../src/auth/keys.ts';
import { TOKEN_ROUTE } from '../src/auth/token-route.ts';
import { BOOK_ROUTES } from '../src/books/book-routes.ts';
import { createCors } from '../src/http/cors.ts';
import { ANSWERS } from '../src/http/messages.ts';
import { encodedReply, envelopeReply } from '../src/http/respond.ts';
import type { Reply, RequestContext } from '../src/http/route.ts';
import { silentLogger } from '../src/log.ts';
import { MemoryBudget } from '../src/memory/budget.ts';
import { HEALTH_ROUTE } from '../src/health/health-routes.ts';
import type { DurableBookStore } from '../src/store/book-store.ts';
import { openStore } from '../src/store/open.ts';
import { tempDirs } from './helpers/temp-dirs.ts';

/*
 * What is built for every answer keeps one hidden class (V8's map) from one answer to the next.
 * On Node 20, `{ ...ANSWERS.x, data }` gives each object a map of its own once the spread is warm
 * (after ~8 calls): GET /book/{id} cost ~10 µs more per answer that way (docs/performance.md,
 * "Design choices and their measured effect"). Nothing here is timed: the maps are compared with
 * V8's own %HaveSameMap.
 */
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

/** Well past the calls after which a spread's result stops sharing a map. */
const CALLS = 100;

/** How many of CALLS objects `make` builds have another map than the first one. */
async function otherMaps(make: (i: number) => object | Promise<object>): Promise<number> {
  const first = await make(0);
  let other = 0;
  for (let i = 1; i < CALLS; i++) if (!haveSameMap(first, await make(i))) other++;
  return other;
}

const context = (fields: Partial<RequestContext>): RequestContext => fields as RequestContext;

describe('replies built per answer keep one hidden class', () => {
  const dirs = tempDirs('reply-shapes-');
  let store: DurableBookStore;
  const ids: number[] = [];
  before(async () => {
    store = await openStore(await dirs.make());
    for (const title of ['Dune', 'Emma', 'Ulysses']) ids.push((await store.create({ title, author: 'Someone', year: 1965 })).id);
  });
  after(async () => {
    await store.close();
    await dirs.removeAll();
  });

  it('envelopeReply, with and without headers', async () => {
    const answers = [ANSWERS.bookRetrieved, ANSWERS.bookUpdated, ANSWERS.ok];
    assert.equal(await otherMaps((i) => envelopeReply(answers[i % 3] ?? ANSWERS.ok, `{"n":${i}}`)), 0);
    assert.equal(await otherMaps((i) => envelopeReply(answers[i % 3] ?? ANSWERS.ok, 'null', { etag: `"${i}"` })), 0);
  });

  it('encodedReply, with and without headers', async () => {
    assert.equal(await otherMaps((i) => encodedReply(ANSWERS.ok, `{"n":${i}}`)), 0);
    assert.equal(await otherMaps((i) => encodedReply(ANSWERS.invalidToken, 'null', { 'www-authenticate': `Bearer ${i}` })), 0);
  });

  it('GET /book/{id}: the reply and its headers', async () => {
    const route = BOOK_ROUTES.find((r) => r.method === 'GET' && r.pattern === '/book/{id}');
    assert.ok(route !== undefined);
    const handle = route.handler({ store, linkBase: '', memoryBudget: new MemoryBudget(1 << 20) });
    const read = (i: number): Reply => handle(context({ params: { id: String(ids[i % ids.length]) } })) as Reply;
    assert.equal(await otherMaps(read), 0);
    assert.equal(await otherMaps((i) => read(i).headers ?? {}), 0);
  });

  it('GET /books with limit and after: a page and its headers', async () => {
    const route = BOOK_ROUTES.find((r) => r.method === 'GET' && r.pattern === '/books');
    assert.ok(route !== undefined);
    const handle = route.handler({ store, linkBase: '', memoryBudget: new MemoryBudget(1 << 20) });
    const page = async (i: number): Promise<Reply> => handle(context({ req: { url: `/books?limit=1&after=${i % ids.length}` } as IncomingMessage }));
    assert.equal(await otherMaps(page), 0);
  });

  it('GET /healthz', async () => {
    const route = HEALTH_ROUTE.handler({ isDraining: () => false });
    assert.equal(await otherMaps(() => route(context({})) as Reply), 0);
  });

  it('POST /token', async () => {
    const handle = TOKEN_ROUTE.handler({ username: 'u', password: 'p', keys: signingKeys('k'.repeat(32)), loginMaxFailures: 0, now: Date.now, logger: silentLogger });
    const login = async (): Promise<Reply> => {
      const req = Object.assign(Readable.from([Buffer.from('{"username":"u","password":"p"}')]), {
        headers: { 'content-type': 'application/json' },
        socket: { remoteAddress: '127.0.0.1' },
      });
      return handle(context({ req: req as unknown as IncomingMessage }));
    };
    assert.equal((await login()).status, 200);
    assert.equal(await otherMaps(login), 0);
  });

  it('CORS headers for an allowed origin, one origin or any', async () => {
    const listed = createCors(['https://a.example', 'https://b.example']);
    const any = createCors(['*']);
    assert.ok(listed !== undefined && any !== undefined);
    assert.equal(await otherMaps((i) => listed.responseHeaders(i % 2 === 0 ? 'https://a.example' : 'https://b.example')), 0);
    assert.equal(await otherMaps((i) => any.responseHeaders(`https://${i}.example`)), 0);
  });
});
