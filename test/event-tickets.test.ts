import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { signToken, TOKEN_LIFETIME_SECONDS } from '../src/auth/jwt.ts';
import { createMetrics } from '../src/index.ts';
import { startApp, TEST_SECRET, TEST_USER, type TestApp } from './helpers/app.ts';
import { changeSeqs, openEvents, type SseFrame } from './helpers/sse-client.ts';
import { tempDirs } from './helpers/temp-dirs.ts';
import { hmacSignature } from './helpers/token.ts';
import { within } from './helpers/wait.ts';

/*
 * docs/contract.md, "Event tickets": a browser's EventSource cannot send Authorization, so GET
 * /events also takes `?ticket=` from POST /events/ticket.
 */

const temp = tempDirs('event-tickets-');
after(() => temp.removeAll());

const book = (title: string): { title: string; author: string; year: number } => ({ title, author: 'A. Author', year: 2001 });
const hasSeq = (seq: number) => (frames: SseFrame[]) => changeSeqs(frames).includes(seq);

interface Ticket {
  ticket: string;
  exp: number;
}

async function ticketFor(app: TestApp, token = app.token()): Promise<Ticket> {
  const res = await app.request('POST', '/events/ticket', { headers: { authorization: token } });
  assert.equal(res.status, 200, res.text);
  return res.json.data as Ticket;
}

/** GET /events with the ticket in the query and no Authorization header, as an EventSource sends it. */
const byTicket = (app: TestApp, ticket: string, query = '') => openEvents(`${app.url}/events?ticket=${encodeURIComponent(ticket)}${query}`, {});

const expOf = (token: string): number => (JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8')) as { exp: number }).exp;

describe('POST /events/ticket and GET /events?ticket=', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it("200 OK: an opaque ticket and the token's exp, never later", async () => {
    const token = app.token();
    const res = await app.request('POST', '/events/ticket', { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json), ['status', 'message', 'data']);
    assert.equal(res.json.message, 'OK');
    const { ticket, exp } = res.json.data as Ticket;
    assert.equal(exp, expOf(token));
    assert.match(ticket, /^[0-9A-Za-z._-]{20,64}$/, 'needs no escaping in a URL');
    assert.ok(!ticket.includes(token.split('.')[2] as string), 'the token is not in it');
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('needs a token (a ticket cannot make another), and takes only POST', async () => {
    const none = await app.request('POST', '/events/ticket', { auth: false });
    assert.deepEqual(none.json, { status: 401, message: 'Authorization token required', data: null });
    const { ticket } = await ticketFor(app);
    const byItself = await app.request('POST', `/events/ticket?ticket=${ticket}`, { auth: false });
    assert.deepEqual(byItself.json, { status: 401, message: 'Authorization token required', data: null });
    const get = await app.request('GET', '/events/ticket');
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST');
  });

  it('opens GET /events without Authorization: the stream resumes by since and follows live changes', async () => {
    await app.request('POST', '/book', { body: book('Before') });
    const seq = app.store.feed.seq;
    const { ticket } = await ticketFor(app);
    const stream = await byTicket(app, ticket, `&since=${seq - 1}`);
    try {
      assert.equal(stream.status, 200);
      assert.equal(stream.headers.get('referrer-policy'), 'no-referrer');
      await stream.until(hasSeq(seq));
      await app.request('POST', '/book', { body: book('Live') });
      await stream.until(hasSeq(seq + 1));
      assert.deepEqual(changeSeqs(stream.frames), [seq, seq + 1]);
    } finally {
      stream.close();
    }
  });

  it('opens nothing else: not as a token, not in the query of another route', async () => {
    const { ticket } = await ticketFor(app);
    const asToken = await app.request('GET', '/books', { headers: { authorization: ticket } });
    assert.deepEqual(asToken.json, { status: 401, message: 'Invalid token', data: null });
    const inQuery = await app.request('GET', `/books?ticket=${ticket}`, { auth: false });
    assert.deepEqual(inQuery.json, { status: 401, message: 'Authorization token required', data: null });
    const asEventsToken = await openEvents(`${app.url}/events`, { authorization: ticket });
    assert.equal(asEventsToken.status, 401);
  });

  it('401 Invalid token with the invalid_token challenge for a changed, doubled, oversized or foreign ticket; an empty one is no ticket', async () => {
    const { ticket, exp } = await ticketFor(app);
    const mac = ticket.slice(ticket.indexOf('.') + 1);
    const foreign = await startApp({ secret: 'another-secret-that-is-at-least-32-bytes!' });
    const foreignTicket = (await ticketFor(foreign)).ticket;
    await foreign.close();
    const refused = [
      `${exp + 60}.${mac}`,
      `${ticket.slice(0, -1)}${ticket.endsWith('A') ? 'B' : 'A'}`,
      `${exp}`,
      `0${ticket}`,
      `${ticket}&ticket=${ticket}`,
      `${ticket}${'A'.repeat(100)}`,
      foreignTicket,
    ];
    for (const bad of refused) {
      const res = await openEvents(`${app.url}/events?ticket=${bad}`, {});
      assert.equal(res.status, 401, bad);
      assert.deepEqual(JSON.parse(res.text), { status: 401, message: 'Invalid token', data: null }, bad);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="book-catalogue", error="invalid_token"');
    }
    const empty = await openEvents(`${app.url}/events?ticket=`, {});
    assert.deepEqual(JSON.parse(empty.text), { status: 401, message: 'Authorization token required', data: null });
  });

  it('a ticket MACed with the signing secret itself is 401: the ticket key is derived for tickets alone', async () => {
    const { ticket, exp } = await ticketFor(app);
    const underSecret = `${exp}.${hmacSignature(String(exp), TEST_SECRET)}`;
    assert.notEqual(underSecret, ticket, 'the ticket is the HMAC of its exp under the secret that signs tokens');
    const res = await openEvents(`${app.url}/events?ticket=${underSecret}`, {});
    assert.equal(res.status, 401, 'HMAC-SHA256 of the exp under the secret that signs tokens opened the stream');
    res.close();
  });

  it('a token in Authorization is what counts when both are sent', async () => {
    const { ticket } = await ticketFor(app);
    const res = await openEvents(`${app.url}/events?ticket=${ticket}`, { authorization: 'not-a-token' });
    assert.deepEqual(JSON.parse(res.text), { status: 401, message: 'Invalid token', data: null });
  });

  it('never reaches a log line or a metric, valid or refused', async () => {
    const metrics = createMetrics();
    const logged = await startApp({ metrics, logLevel: 'debug' });
    try {
      const { ticket } = await ticketFor(logged);
      const stream = await byTicket(logged, ticket, '&since=0');
      assert.equal(stream.status, 200);
      stream.close();
      await stream.ended;
      const mac = ticket.slice(ticket.indexOf('.') + 1);
      const refused = await byTicket(logged, `${ticket.slice(0, ticket.indexOf('.'))}.${mac.slice(1)}A`);
      assert.equal(refused.status, 401);
      const lines = logged.logs.join('');
      assert.ok(lines.includes('"path":"/events"'), 'the request lines name the path');
      assert.ok(lines.includes('"credential":"ticket"'), 'the refusal is logged, at debug');
      const exposed = metrics.registry.expose();
      for (const text of [lines, exposed]) {
        assert.ok(!text.includes(mac.slice(0, 16)) && !text.includes(mac.slice(1, 17)) && !text.includes('ticket='));
      }
    } finally {
      metrics.close();
      await logged.close();
    }
  });
});

describe("an event ticket's lifetime", () => {
  it("ends with the token it was made from: the stream ends with event: expired at its exp, then the ticket is 401 Invalid token", async () => {
    // As in test/events.test.ts: the app's clock runs 898.5 s ahead, the token is signed 2 s ahead of
    // the real clock, so by the app's clock it expires 2.5 to 3.5 s from now.
    let skewMs = 898_500;
    const app = await startApp({ now: () => Date.now() + skewMs });
    try {
      const signedAt = Math.floor(Date.now() / 1000 + 2);
      const token = signToken(TEST_USER, Buffer.from(TEST_SECRET), signedAt);
      const { ticket, exp } = await ticketFor(app, token);
      assert.equal(exp, signedAt + TOKEN_LIFETIME_SECONDS);
      const stream = await byTicket(app, ticket);
      assert.equal((await app.request('POST', '/book', { body: book('While open') })).status, 201);
      await stream.until(hasSeq(1));
      await within("the stream ending at its ticket's exp", stream.ended);
      assert.deepEqual(stream.frames.filter((f) => f.comment === undefined).at(-1), { event: 'expired', data: '1' });
      skewMs += 1000;
      const again = await byTicket(app, ticket);
      again.close();
      assert.equal(again.status, 401, 'the ticket opened the stream again after its exp');
      assert.deepEqual(JSON.parse(again.text), { status: 401, message: 'Invalid token', data: null });
    } finally {
      await app.close();
    }
  });

  it('verifies after a restart on the same secret (an EventSource reconnects to the same URL) and during a rotation; not after a new secret alone', async () => {
    const dataDir = await temp.make();
    const first = await startApp({ dataDir });
    const { ticket } = await ticketFor(first);
    await first.close();
    const restarted = await startApp({ dataDir });
    try {
      const stream = await byTicket(restarted, ticket);
      assert.equal(stream.status, 200);
      stream.close();
    } finally {
      await restarted.close();
    }
    const rotated = await startApp({ dataDir, secret: 'the-next-secret-that-is-at-least-32-bytes', previousSecret: TEST_SECRET });
    try {
      const stream = await byTicket(rotated, ticket);
      assert.equal(stream.status, 200);
      stream.close();
    } finally {
      await rotated.close();
    }
    const replaced = await startApp({ dataDir, secret: 'the-next-secret-that-is-at-least-32-bytes' });
    try {
      assert.equal((await byTicket(replaced, ticket)).status, 401);
    } finally {
      await replaced.close();
    }
  });
});
