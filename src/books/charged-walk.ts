import type { Charge, MemoryBudget } from '../memory/budget.ts';
import type { ListSnapshot } from '../store/book-index.ts';
import type { PageWalk } from '../store/list-readers.ts';

/**
 * A walk over a snapshot that is a `list_snapshots` consumer of the memory budget: charged for the
 * superseded pages it is the holder of last resort for (ListReaders), ranked by `moved` (bytes it
 * sent or scanned). Shedding it lets its pages go at once, so the budget sees what that freed
 * before it picks again, then calls `cut` to end what it was for (close the connection, stop the
 * search). Closing it ends its charge.
 */
export function chargedWalk(budget: MemoryBudget, snapshot: ListSnapshot, moved: () => number, cut: () => void): PageWalk {
  // Opened first, charged after: a report may shed this very consumer, which needs its walk.
  let charge: Charge | undefined;
  const walk = snapshot.walk({ moved, set: (bytes) => charge?.set(bytes) });
  const account = budget.add({
    kind: 'list_snapshots',
    moved,
    shed: () => {
      walk.close();
      account.release();
      cut();
    },
  });
  charge = account;
  account.set(walk.charged);
  return {
    get charged() {
      return walk.charged;
    },
    passed: () => walk.passed(),
    close: () => {
      walk.close();
      account.release();
    },
  };
}
