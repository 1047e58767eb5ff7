/**
 * Counts event-loop turns from now until the returned function is called, which stops counting
 * and returns the count: how a test shows that long work yielded to other callbacks.
 */
export function countTurns(): () => number {
  let turns = 0;
  let counting = true;
  const tick = (): void => {
    turns++;
    if (counting) setImmediate(tick);
  };
  setImmediate(tick);
  return () => {
    counting = false;
    return turns;
  };
}
