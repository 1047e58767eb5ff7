import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RequestIds } from '../src/http/request-ids.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('RequestIds: the ids of answers whose request named none', () => {
  it('makes UUID-shaped ids in the version 4 layout, each different from the last', () => {
    const ids = new RequestIds();
    const made = Array.from({ length: 1000 }, () => ids.next());
    for (const id of made) assert.match(id, UUID_V4);
    assert.equal(new Set(made).size, made.length);
  });

  it('sets the version and variant whatever the random bytes are', () => {
    assert.match(new RequestIds(Buffer.alloc(16, 0xff)).next(), UUID_V4);
    assert.match(new RequestIds(Buffer.alloc(16, 0)).next(), UUID_V4);
  });

  it('counts on from a random start and wraps at 2^48 instead of growing a digit', () => {
    const ids = new RequestIds(Buffer.from('00112233445566778899fffffffffffe', 'hex'));
    assert.equal(ids.next(), '00112233-4455-4677-8899-fffffffffffe');
    assert.equal(ids.next(), '00112233-4455-4677-8899-ffffffffffff');
    assert.equal(ids.next(), '00112233-4455-4677-8899-000000000000');
    const carry = new RequestIds(Buffer.from('00112233445566778899000001fffffe', 'hex'));
    assert.deepEqual([carry.next(), carry.next(), carry.next()], ['00112233-4455-4677-8899-000001fffffe', '00112233-4455-4677-8899-000001ffffff', '00112233-4455-4677-8899-000002000000']);
  });

  it('starts from different places in different processes (or instances)', () => {
    assert.notEqual(new RequestIds().next().slice(0, 23), new RequestIds().next().slice(0, 23));
  });
});
