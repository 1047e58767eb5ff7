import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { YieldBudget } from '../src/loop/yield-budget.ts';

/** Records, in order, which of a same-turn callback, an immediate queued first, and the yield ran. */
async function order(yieldTurn: (done: () => void) => void): Promise<string[]> {
  const ran: string[] = [];
  setImmediate(() => ran.push('immediate queued before'));
  await new Promise<void>((resolve) => {
    yieldTurn(() => {
      ran.push('after the yield');
      resolve();
    });
    process.nextTick(() => ran.push('same turn'));
  });
  return ran;
}

describe('YieldBudget', () => {
  it('a counted share is spent once the work reported reaches it, and not before', () => {
    const turn = YieldBudget.counted(100);
    assert.equal(turn.spent, false);
    turn.spend(99);
    assert.equal(turn.spent, false);
    turn.spend(1);
    assert.equal(turn.spent, true);
  });

  it('a timed share is spent when its clock reaches the deadline, measured from its start', () => {
    let now = 1000;
    const slice = YieldBudget.timed(5, () => now);
    assert.equal(slice.deadline, 1005);
    now = 1004.9;
    assert.equal(slice.spent, false);
    now = 1005;
    assert.equal(slice.spent, true);
  });

  it('a timed share ignores what is reported to it: its clock alone measures it', () => {
    const slice = YieldBudget.timed(5, () => 0);
    slice.spend(1e9);
    assert.equal(slice.spent, false);
  });

  it('nextTurn renews the share only after the loop ran what was queued before it', async () => {
    let now = 0;
    const slice = YieldBudget.timed(5, () => now);
    now = 7;
    assert.equal(slice.spent, true);
    const ran = await order((done) => void slice.nextTurn().then(done));
    assert.deepEqual(ran, ['same turn', 'immediate queued before', 'after the yield']);
    assert.equal(slice.deadline, 12);
    assert.equal(slice.spent, false);
  });

  it('onNextTurn calls back on a later turn with the count renewed', async () => {
    const turn = YieldBudget.counted(10);
    turn.spend(10);
    let spentWhenCalled: boolean | undefined;
    const ran = await order((done) =>
      turn.onNextTurn(() => {
        spentWhenCalled = turn.spent;
        done();
      }),
    );
    assert.deepEqual(ran, ['same turn', 'immediate queued before', 'after the yield']);
    assert.equal(spentWhenCalled, false);
  });

  it('nothing renews a share but a yield: it stays spent across ticks and resolved promises', async () => {
    const turn = YieldBudget.counted(1);
    turn.spend(1);
    await new Promise<void>((resolve) => process.nextTick(resolve));
    await Promise.resolve();
    assert.equal(turn.spent, true);
  });

  it('timed jobs take one slice per event-loop turn between them, however many run at once', async () => {
    const log: string[] = [];
    let jobsDone = false;
    const turnMark = (): void => {
      log.push('|');
      if (!jobsDone) setImmediate(turnMark);
    };
    setImmediate(turnMark);
    const job = async (name: string): Promise<void> => {
      // Every slice is used up at once: each job asks for a turn after each of its slices.
      const slice = YieldBudget.timed(5, () => Infinity);
      for (let i = 0; i < 3; i++) {
        log.push(name);
        await slice.nextTurn();
      }
    };
    await Promise.all([job('a'), job('b'), job('c')]);
    jobsDone = true;
    const turns = log.join('').split('|').slice(1);
    assert.ok(turns.every((slices) => slices.length <= 1), `more than one slice in a turn: ${log.join('')}`);
    assert.equal(turns.join('').length, 6, 'every job had its later slices');
  });

  it('a timed job started while others wait for their turn begins with its share spent', async () => {
    const waiting = YieldBudget.timed(5, () => Infinity);
    const turn = waiting.nextTurn();
    const late = YieldBudget.timed(5, () => 0);
    assert.equal(late.spent, true, 'joins the line before its first slice');
    await turn;
    assert.equal(YieldBudget.timed(5, () => 0).spent, false, 'with nobody waiting, its first slice starts at once');
  });
});
