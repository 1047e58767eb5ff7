import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryBudget, type Charge, type ConsumerKind } from '../src/memory/budget.ts';

/** A consumer whose shed() frees everything, recording the order in which consumers were shed. */
function consumer(budget: MemoryBudget, name: string, kind: ConsumerKind, moved: () => number, shed: string[]): Charge {
  const charge: Charge = budget.add({
    kind,
    moved,
    shed: () => {
      shed.push(name);
      charge.release();
    },
  });
  return charge;
}

describe('MemoryBudget', () => {
  it('keeps a running total per kind and in all, and forgets a released consumer', () => {
    const budget = new MemoryBudget(1000);
    const a = budget.add({ kind: 'list_snapshots', moved: () => 0, shed: () => undefined });
    const b = budget.add({ kind: 'event_streams', moved: () => 0, shed: () => undefined });
    a.set(300);
    b.set(200);
    a.set(100);
    assert.equal(budget.held, 300);
    assert.equal(budget.heldBy('list_snapshots'), 100);
    assert.equal(budget.heldBy('event_streams'), 200);
    a.release();
    a.set(50);
    assert.equal(budget.held, 200, 'a released charge counts nothing, whatever it reports later');
    assert.equal(budget.heldBy('list_snapshots'), 0);
  });

  it('sheds, once spent, the consumer that would hold its bytes longest: the stalled one before the slow one before the fast one', () => {
    let clock = 0;
    const budget = new MemoryBudget(1000, { now: () => clock });
    const shed: string[] = [];
    const fast = consumer(budget, 'fast', 'list_snapshots', () => 10_000_000, shed);
    const stalled = consumer(budget, 'stalled', 'answers_in_flight', () => 0, shed);
    const slow = consumer(budget, 'slow', 'list_snapshots', () => 10_000, shed);
    clock = 10_000;
    fast.set(400);
    stalled.set(100);
    slow.set(400);
    assert.deepEqual(shed, [], 'within the budget nothing is shed');
    slow.set(600);
    assert.deepEqual(shed, ['stalled'], 'the stalled consumer goes first although it holds least');
    assert.equal(budget.held, 1000);
    fast.set(500);
    assert.deepEqual(shed, ['stalled', 'slow']);
    assert.equal(budget.held, 500);
    assert.equal(budget.shedCount('list_snapshots'), 1);
    assert.equal(budget.shedCount('answers_in_flight'), 1);
  });

  it('sheds retained changes only when no stream or connection holds anything', () => {
    const budget = new MemoryBudget(100, { now: () => 1000 });
    const shed: string[] = [];
    const history = consumer(budget, 'history', 'retained_changes', () => 0, shed);
    const stream = consumer(budget, 'stream', 'event_streams', () => 1_000_000_000, shed);
    history.set(90);
    stream.set(20);
    assert.deepEqual(shed, ['stream'], 'a fast stream goes before the feed history');
    history.set(120);
    assert.deepEqual(shed, ['stream', 'history']);
  });

  it('asks a consumer that frees nothing once, then moves on to the next', () => {
    const budget = new MemoryBudget(100, { now: () => 1000 });
    let asked = 0;
    let rounds = 1;
    const stubborn = budget.add({
      kind: 'answers_in_flight',
      moved: () => 0,
      shed: () => {
        asked++;
        // Asked again within a round, the budget would ask for ever: fail instead of hanging.
        if (asked > rounds) throw new Error(`a consumer that frees nothing was asked ${asked} times in ${rounds} round(s)`);
      },
    });
    const shed: string[] = [];
    const other = consumer(budget, 'other', 'list_snapshots', () => 1_000_000, shed);
    other.set(50);
    stubborn.set(80);
    assert.equal(asked, 1);
    assert.deepEqual(shed, ['other']);
    rounds = 2;
    stubborn.set(110);
    assert.equal(asked, 2, 'each report over the budget is a new round');
    assert.equal(budget.held, 110, "what cannot be freed stays counted");
  });

  it('never cuts a consumer that holds nothing, though the budget stays spent', () => {
    const budget = new MemoryBudget(100, { now: () => 1000 });
    const shed: string[] = [];
    consumer(budget, 'caught-up stream', 'event_streams', () => 0, shed).set(0);
    let asked = 0;
    const stubborn = budget.add({
      kind: 'answers_in_flight',
      moved: () => 0,
      shed: () => {
        if (++asked > 1) throw new Error(`a consumer that frees nothing was asked ${asked} times in one round`);
      },
    });
    stubborn.set(150);
    assert.deepEqual(shed, [], 'cutting it would free nothing');
    assert.equal(budget.shedCount('event_streams'), 0);
  });

  it('reports each shed consumer with what it held', () => {
    const seen: [ConsumerKind, number][] = [];
    const budget = new MemoryBudget(10, { now: () => 1000, onShed: (kind, held) => seen.push([kind, held]) });
    const shed: string[] = [];
    consumer(budget, 'one', 'event_streams', () => 0, shed).set(11);
    assert.deepEqual(seen, [['event_streams', 11]]);
  });
});
