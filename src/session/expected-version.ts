import { describeValue, Rejection } from '../todo/rejection';

/**
 * Optimistic concurrency: a write based on version `expected` is refused unless the session is
 * still at that version, so a stale writer never clobbers a newer list. `undefined` skips it.
 *
 * @throws Rejection (`stale-version`) giving both versions, or (`shape`) for a bad value.
 */
export function checkExpectedVersion(expected: unknown, current: number): void {
  if (expected === undefined || expected === null) return;
  if (typeof expected !== 'number' || !Number.isInteger(expected) || expected < 0) {
    throw new Rejection([
      { rule: 'shape', path: 'expectedVersion', detail: `expectedVersion must be a non-negative integer, got ${describeValue(expected)}` },
    ]);
  }
  if (expected !== current) {
    throw new Rejection([
      {
        rule: 'stale-version',
        path: 'expectedVersion',
        detail: `the write was based on version ${expected} but the session is at version ${current}; read the current list and write again`,
      },
    ]);
  }
}

/**
 * Checks the optional second argument of `todo_write` (`{ "expectedVersion": N }`) and applies
 * the version check. Anything else there — a typo such as `expectedVersoin`, a number, an
 * array — is refused, because ignoring it would silently skip the check the sender asked for.
 *
 * @throws Rejection (`shape` or `stale-version`).
 */
export function checkWriteOptions(options: unknown, current: number): void {
  if (options === undefined || options === null) return;
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new Rejection([
      { rule: 'shape', path: 'options', detail: `the second argument must be an object {"expectedVersion": N}, got ${describeValue(options)}` },
    ]);
  }
  const unknown = Object.keys(options).filter((key) => key !== 'expectedVersion');
  if (unknown.length > 0) {
    throw new Rejection([
      {
        rule: 'shape',
        path: 'options',
        detail: `the second argument has unknown propert${unknown.length === 1 ? 'y' : 'ies'} ${unknown.slice(0, 10).map((k) => describeValue(k)).join(', ')}; only "expectedVersion" is allowed`,
      },
    ]);
  }
  checkExpectedVersion((options as { expectedVersion?: unknown }).expectedVersion, current);
}
