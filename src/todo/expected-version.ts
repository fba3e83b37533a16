import { describeValue, TodoRejection } from './rejection';

/**
 * Optimistic concurrency: a write based on version `expected` is refused unless the session is
 * still at that version, so a stale writer never clobbers a newer list. `undefined` skips it.
 *
 * @throws TodoRejection (`stale-version`) giving both versions, or (`shape`) for a bad value.
 */
export function checkExpectedVersion(expected: unknown, current: number): void {
  if (expected === undefined || expected === null) return;
  if (typeof expected !== 'number' || !Number.isInteger(expected) || expected < 0) {
    throw new TodoRejection([
      { rule: 'shape', path: 'expectedVersion', detail: `expectedVersion must be a non-negative integer, got ${describeValue(expected)}` },
    ]);
  }
  if (expected !== current) {
    throw new TodoRejection([
      {
        rule: 'stale-version',
        path: 'expectedVersion',
        detail: `the write was based on version ${expected} but the session is at version ${current}; read the current list and write again`,
      },
    ]);
  }
}
