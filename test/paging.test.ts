import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpError } from '../src/http/messages.ts';
import { cursorParam, MAX_PAGE_LIMIT, nextPageLink, pageLimit } from '../src/http/paging.ts';

const refusedWith = (message: string) => (e: unknown) => e instanceof HttpError && e.status === 400 && e.message === message;

describe('paging: the rules GET /books and GET /changes share', () => {
  it('a limit is 1 to 1000, as decimal digits', () => {
    assert.equal(MAX_PAGE_LIMIT, 1000);
    assert.equal(pageLimit('1'), 1);
    assert.equal(pageLimit('01000'), 1000);
    for (const text of ['0', '1001', '1e2', '-1', '']) assert.throws(() => pageLimit(text), refusedWith('Invalid query'), text);
  });

  it('an after of any size is taken: past the last safe integer it is past every id', () => {
    assert.equal(cursorParam('0', 'after'), 0);
    assert.equal(cursorParam('9'.repeat(400), 'after'), Number.POSITIVE_INFINITY);
  });

  it('a seq is a safe integer; a larger one is refused, with the answer the caller names', () => {
    assert.equal(cursorParam(String(Number.MAX_SAFE_INTEGER), 'seq'), Number.MAX_SAFE_INTEGER);
    assert.throws(() => cursorParam('9007199254740992', 'seq'), refusedWith('Invalid query'));
    assert.throws(() => cursorParam('9007199254740992', 'seq', 'badRequest'), refusedWith('Bad request'));
    assert.throws(() => cursorParam('-1', 'after'), refusedWith('Invalid query'));
  });

  it('the next page is an RFC 8288 link under the mount path', () => {
    assert.equal(nextPageLink('/api', '/changes', 'since=5&limit=2'), '</api/changes?since=5&limit=2>; rel="next"');
  });
});
