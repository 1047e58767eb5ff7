import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { resumePoint } from '../src/events/resume-point.ts';
import { addVary, trimOws } from '../src/http/header-value.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { rawRequest } from './helpers/raw.ts';

/** Header bytes as latin1, so `\xA0` goes on the wire as the single byte 0xA0 (what a client sends). */
function request(port: number, headerLines: string, head = 'GET /books'): Promise<import('./helpers/raw.ts').RawResponse> {
  return rawRequest(port, Buffer.from(`${head} HTTP/1.1\r\nHost: x\r\n${headerLines}\r\n`, 'latin1'));
}

describe('optional whitespace in header values is SP and HTAB only (RFC 9110 §5.6.3)', () => {
  let app: TestApp;
  before(async () => {
    app = await startApp();
  });
  after(() => app.close());

  it('trimOws strips spaces and tabs, nothing else', () => {
    assert.equal(trimOws(' \t a b \t '), 'a b');
    assert.equal(trimOws('\u00a0a\u00a0'), '\u00a0a\u00a0');
    assert.equal(trimOws('\u2028a\u3000'), '\u2028a\u3000');
    assert.equal(trimOws('\r\na\n'), '\r\na\n');
    assert.equal(trimOws(''), '');
    assert.equal(trimOws(' \t '), '');
  });

  for (const [name, around] of [
    ['U+00A0 (no-break space)', '\xA0'],
    ['U+0085 (next line)', '\x85'],
  ] as const) {
    it(`a token wrapped in ${name} is Invalid token, raw or after Bearer`, async () => {
      const token = app.token();
      for (const value of [`${around}${token}${around}`, `Bearer ${around}${token}${around}`, `${around}Bearer ${token}`]) {
        const res = await request(app.port, `Authorization: ${value}\r\n`);
        assert.equal(res.status, 401, JSON.stringify(value));
        assert.equal(res.json?.message, 'Invalid token');
      }
    });
  }

  it('a token wrapped in spaces and tabs is still accepted', async () => {
    const res = await request(app.port, `Authorization: \t ${app.token()} \t\r\n`);
    assert.equal(res.status, 200);
    const bearer = await request(app.port, `Authorization: Bearer \t${app.token()}\t\r\n`);
    assert.equal(bearer.status, 200);
  });

  it('an Authorization header of U+00A0 alone is a token that fails, not a blank header', async () => {
    const res = await request(app.port, 'Authorization: \xA0\r\n');
    assert.equal(res.json?.message, 'Invalid token');
  });

  it('If-Match: a tag wrapped in U+00A0 does not match; wrapped in SP/HTAB it does', async () => {
    const created = await app.request('POST', '/book', { body: { title: 'T', author: 'A', year: 2000 } });
    const id = (created.json.data as { id: number }).id;
    const etag = created.headers.get('etag') as string;
    const head = `PUT /book/${id} HTTP/1.1\r\nHost: x\r\nAuthorization: ${app.token()}\r\nIf-Match: \xA0${etag}\r\nContent-Length: 2\r\n\r\n{}`;
    const refused = await rawRequest(app.port, Buffer.from(head, 'latin1'));
    assert.equal(refused.status, 412);
    const accepted = await app.request('PUT', `/book/${id}`, { body: {}, headers: { 'if-match': `\t${etag} , "x"` } });
    assert.equal(accepted.status, 200);
  });

  it('Last-Event-ID: SP/HTAB around the id are trimmed, U+00A0 is not (400 Bad request)', () => {
    const at = (value: string): IncomingMessage => ({ headers: { 'last-event-id': value }, url: '/events' }) as unknown as IncomingMessage;
    assert.equal(resumePoint(at(' \t5\t')), 5);
    assert.throws(() => resumePoint(at('\u00a05\u00a0')), { status: 400, message: 'Bad request' });
  });

  it('X-Request-Id wrapped in U+00A0 is not echoed (a fresh id is generated)', async () => {
    const res = await request(app.port, `Authorization: ${app.token()}\r\nX-Request-Id: \xA0abc\xA0\r\n`);
    assert.notEqual(res.headers['x-request-id'], 'abc');
    assert.match(res.headers['x-request-id'] ?? '', /^[0-9a-f-]{36}$/);
  });
});

describe('addVary: one rule for every answer that adds a field to Vary (RFC 9110 §12.5.5)', () => {
  it('starts the list, appends each field it lacks, and leaves a list that names the field already, whatever its case or spacing', () => {
    assert.equal(addVary(undefined, 'Origin'), 'Origin');
    assert.equal(addVary('Origin', 'Accept-Encoding'), 'Origin, Accept-Encoding');
    assert.equal(addVary('Origin,  accept-encoding', 'Accept-Encoding'), 'Origin,  accept-encoding');
    assert.equal(addVary('Accept-Encoding', 'Origin'), 'Accept-Encoding, Origin');
    assert.equal(addVary('X-Origin-Id', 'Origin'), 'X-Origin-Id, Origin', 'a field whose name merely contains it is another field');
    assert.equal(addVary('Origin', 'Origin, Access-Control-Request-Method'), 'Origin, Access-Control-Request-Method', 'a list: each field it lacks');
  });
});
