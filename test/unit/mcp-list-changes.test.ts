import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ListChanges, type WatchSession } from '../../src/mcp/session-watch';
import type { SessionSnapshot } from '../../src/session';

/** A watch whose readings the test hands in, one at a time, as the session's poll would. */
function scriptedWatch() {
  let listener: ((snapshot: SessionSnapshot) => void) | undefined;
  let onError: ((error: unknown) => void) | undefined;
  let watching = 0;
  const watch: WatchSession = (next, error) => {
    listener = next;
    onError = error;
    watching += 1;
    return () => {
      watching -= 1;
    };
  };
  return {
    watch,
    reading: (version: number, closed = false) => listener!({ version, closed } as SessionSnapshot),
    missing: () => onError!(new Error('no session yet')),
    watching: () => watching,
  };
}

test('the first reading is the baseline, not a change; a later version is', () => {
  const session = scriptedWatch();
  const changes = new ListChanges(session.watch);
  let told = 0;
  changes.listen(() => (told += 1));
  session.reading(4);
  session.reading(4);
  assert.equal(told, 0);
  session.reading(5);
  assert.equal(told, 1);
});

test('a write made here is told at once, and its reading by the poll afterwards is not told again', () => {
  const session = scriptedWatch();
  const changes = new ListChanges(session.watch);
  let told = 0;
  changes.listen(() => (told += 1));
  session.missing();
  changes.written(1);
  assert.equal(told, 1);
  session.reading(1);
  assert.equal(told, 1);
});

test('a write whose version the first reading already held (the two raced) is still told', () => {
  const session = scriptedWatch();
  const changes = new ListChanges(session.watch);
  let told = 0;
  changes.listen(() => (told += 1));
  session.reading(1);
  changes.written(1);
  assert.equal(told, 1);
});

test('a session that closes is a change; the watch runs only while someone listens', () => {
  const session = scriptedWatch();
  const changes = new ListChanges(session.watch);
  let told = 0;
  const stop = changes.listen(() => (told += 1));
  const other = changes.listen(() => undefined);
  assert.equal(session.watching(), 1, 'one watch for every listener');
  session.reading(3);
  session.reading(3, true);
  assert.equal(told, 1);
  stop();
  assert.equal(session.watching(), 1);
  other();
  assert.equal(session.watching(), 0);
  changes.written(9);
  assert.equal(told, 1, 'nobody listens any more');
});

test('whatever the interleaving of readings and own writes, every newer version is told and nothing else is', () => {
  // A session's versions only grow; the poll reads some of them, own writes report theirs.
  const step = fc.oneof(fc.record({ kind: fc.constant('reading' as const), by: fc.nat(2) }), fc.record({ kind: fc.constant('written' as const), by: fc.integer({ min: 1, max: 2 }) }));
  fc.assert(
    fc.property(fc.nat(5), fc.array(step, { maxLength: 30 }), (start, steps) => {
      const session = scriptedWatch();
      const changes = new ListChanges(session.watch);
      let told = 0;
      changes.listen(() => (told += 1));
      let version = start;
      session.reading(version);
      let newest = version;
      let expected = 0;
      for (const { kind, by } of steps) {
        version += by;
        if (kind === 'written') {
          if (version > newest) expected += 1;
          changes.written(version);
        } else {
          if (version > newest) expected += 1;
          session.reading(version);
        }
        newest = Math.max(newest, version);
      }
      assert.equal(told, expected);
    }),
  );
});
