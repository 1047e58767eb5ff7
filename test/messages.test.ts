import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANSWERS, HttpError, MESSAGES, refusal } from '../src/http/messages.ts';

describe('answers: status and message travel together', () => {
  it('each message has exactly one status', () => {
    const statuses = new Map<string, Set<number>>();
    for (const { status, message } of Object.values(ANSWERS)) statuses.set(message, (statuses.get(message) ?? new Set()).add(status));
    assert.deepEqual([...statuses].filter(([, s]) => s.size > 1), []);
    assert.equal(statuses.size, Object.keys(ANSWERS).length, 'no message is listed twice');
  });

  it('MESSAGES is the message of each answer, by the same name', () => {
    assert.deepEqual(Object.keys(MESSAGES), Object.keys(ANSWERS));
    for (const [name, answer] of Object.entries(ANSWERS)) assert.equal(MESSAGES[name as keyof typeof MESSAGES], answer.message);
  });

  it('a named refusal carries its own status, message and headers', () => {
    const err = refusal('tooManyLoginAttempts', { 'retry-after': '5' });
    assert.ok(err instanceof HttpError);
    assert.deepEqual([err.status, err.message, err.headers], [429, 'Too many login attempts', { 'retry-after': '5' }]);
  });

  it('a status that is not the message\'s own does not compile (npm run typecheck)', () => {
    // @ts-expect-error 404 is not the status of `Invalid input`
    const wrong = new HttpError(404, MESSAGES.invalidInput);
    const right = new HttpError(400, MESSAGES.invalidInput);
    assert.equal(wrong.message, right.message);
  });
});
