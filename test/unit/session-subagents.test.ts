import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InvariantViolation, Rejection } from '../../src/todo';
import {
  acceptSubagentSpawn,
  applySessionEvent,
  assertCarriedState,
  carriedState,
  checkExpectedVersion,
  childSessionId,
  findReceipt,
  foldSession,
  INITIAL_SESSION_STATE,
  LEGACY_RECENT_WRITES_KEPT,
  RECENT_WRITES_KEPT,
  type SessionEvent,
} from '../../src/session';

const write = (content: string, updateId?: string): SessionEvent => ({
  type: 'todo/write',
  todos: [{ content, status: 'pending' }],
  ...(updateId !== undefined ? { updateId } : {}),
});

describe('idempotent writes in the fold', () => {
  test('a write whose update id was already applied changes nothing, version included, and keeps the first receipt', () => {
    const once = foldSession([write('first', 'u1')]);
    const twice = applySessionEvent(once, write('second', 'u1'));
    assert.equal(twice, once);
    assert.deepEqual(findReceipt(twice, 'u1'), { pending: 1, in_progress: 0, completed: 0, message: 'Updated todo list: 1 pending, 0 in progress, 0 completed', version: 1 });
  });

  test('a receipt is compact: the update id, the version and the three counts', () => {
    assert.deepEqual(foldSession([write('first', 'u1')]).recentWrites, [['u1', 1, 1, 0, 0]]);
  });

  test("receipts carried by a first-release run are read as compact receipts that answer the same, and the run keeps as many", () => {
    const legacy = Array.from({ length: LEGACY_RECENT_WRITES_KEPT }, (_, i) => ({
      updateId: `old-${i}`,
      result: { pending: 0, in_progress: 1, completed: i % 3, message: 'ignored: rendered again', version: i + 1 },
    }));
    const carried = { ...INITIAL_SESSION_STATE, version: LEGACY_RECENT_WRITES_KEPT, recentWrites: legacy } as unknown;
    assertCarriedState(carried);
    const state = carriedState(carried);
    assert.deepEqual(findReceipt(state, 'old-4'), { pending: 0, in_progress: 1, completed: 1, message: 'Updated todo list: 0 pending, 1 in progress, 1 completed', version: 5 });
    const after = applySessionEvent(state, write('new', 'new-1'));
    assert.equal(after.recentWrites.length, LEGACY_RECENT_WRITES_KEPT, 'a first-release run keeps the 256 it was given');
    assert.ok(findReceipt(after, 'old-200') !== undefined);
  });

  test('only the most recent receipts are kept, so carried state stays bounded', () => {
    const events = Array.from({ length: RECENT_WRITES_KEPT + 5 }, (_, i) => write(`w${i}`, `u${i}`));
    const state = foldSession(events);
    assert.equal(state.recentWrites.length, RECENT_WRITES_KEPT);
    assert.equal(state.recentWrites[0]?.[0], 'u5');
  });

  test('property: with ids drawn from a small set, the applied writes are exactly the first of each id', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 40 }), (ids) => {
        const state = foldSession(ids.map((id, i) => write(`w${i}`, `u${id}`)));
        assert.equal(state.version, new Set(ids).size);
      }),
    );
  });
});

describe('subagents in the fold', () => {
  const spawn = (name: string): SessionEvent => ({ type: 'subagent/spawn', name, sessionId: childSessionId('p', name), task: `do ${name}` });

  test('a spawn adds a child, its report closes it with counts, a repeated or unknown report is listed as ignored and changes nothing else', () => {
    let state = foldSession([spawn('a'), spawn('b')]);
    assert.deepEqual(state.children.map((c) => [c.name, c.sessionId, c.task, c.closed]), [['a', 'p/a', 'do a', false], ['b', 'p/b', 'do b', false]]);
    const counts = { pending: 0, in_progress: 0, completed: 3 };
    state = applySessionEvent(state, { type: 'subagent/closed', sessionId: 'p/a', counts });
    assert.deepEqual(state.children[0], { name: 'a', sessionId: 'p/a', task: 'do a', closed: true, counts });
    for (const [sessionId, reason] of [
      ['p/a', /already reported that it closed/],
      ['p/zzz', /"p\/zzz", which is not a subagent of this session/],
      [undefined, /names no session/],
    ] as const) {
      const next = applySessionEvent(state, { type: 'subagent/closed', sessionId: sessionId as unknown as string, counts, at: '2026-01-01T00:00:00.000Z' });
      assert.deepEqual({ ...next, ignoredSignals: [] }, { ...state, ignoredSignals: [] }, 'nothing but the list of ignored signals changes');
      assert.equal(next.ignoredSignals.length, state.ignoredSignals.length + 1);
      assert.equal(next.ignoredSignals.at(-1)?.name, 'subagent/closed');
      assert.equal(next.ignoredSignals.at(-1)?.at, '2026-01-01T00:00:00.000Z');
      assert.match(next.ignoredSignals.at(-1)?.reason ?? '', reason);
    }
  });

  test('a subagent whose child really started is recorded even after its parent closed, so the parent closes it too', () => {
    const closed = foldSession([{ type: 'session/close' }]);
    const state = applySessionEvent(closed, spawn('late'));
    assert.deepEqual(state.children.map((c) => [c.name, c.closed]), [['late', false]]);
    assert.equal(state.version, closed.version + 1);
  });

  test('a malformed report from a foreign signal closes the child without inventing counts', () => {
    const state = applySessionEvent(foldSession([spawn('a')]), { type: 'subagent/closed', sessionId: 'p/a', counts: { pending: -1 } as never });
    assert.deepEqual(state.children[0]?.counts, null);
    assert.equal(state.children[0]?.closed, true);
  });

  test('a log that spawns the same name twice breaks the invariant', () => {
    assert.throws(() => foldSession([spawn('a'), spawn('a')]), InvariantViolation);
  });

  test('acceptSubagentSpawn names each broken rule', () => {
    const state = foldSession([spawn('a')]);
    const rule = (input: unknown, s = state) => {
      try {
        acceptSubagentSpawn(input, s);
      } catch (error) {
        assert.ok(error instanceof Rejection);
        assert.match(error.message, /^subagent\/spawn rejected/);
        return error.rule;
      }
      return 'accepted';
    };
    assert.equal(rule({ name: 'b', task: 'x' }), 'accepted');
    assert.equal(rule({ name: 'a' }), 'subagent-exists');
    assert.equal(rule({ name: '../a' }), 'subagent-name');
    assert.equal(rule({ name: 'x'.repeat(65) }), 'subagent-name');
    assert.equal(rule({ name: 'b', task: 3 }), 'subagent-name');
    assert.equal(rule({ name: 'b', priority: 1 }), 'subagent-name');
    assert.equal(rule(null), 'subagent-name');
    assert.equal(rule({ name: 'b' }, foldSession([{ type: 'session/close' }])), 'session-closed');
  });
});

describe('optimistic concurrency', () => {
  test('a matching or absent expected version passes; a different one is stale-version with both numbers', () => {
    checkExpectedVersion(undefined, 4);
    checkExpectedVersion(4, 4);
    assert.throws(() => checkExpectedVersion(3, 4), (error: unknown) => {
      assert.ok(error instanceof Rejection);
      assert.equal(error.rule, 'stale-version');
      assert.match(error.message, /based on version 3 but the session is at version 4/);
      return true;
    });
    assert.throws(() => checkExpectedVersion('4', 4), /expectedVersion must be a non-negative integer, got "4"/);
  });
});

describe('carried state', () => {
  test('any state the fold produces is accepted as carried state', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<SessionEvent>(write('a', 'u1'), write('b'), { type: 'turn/start' }, { type: 'turn/end' }, { type: 'subagent/spawn', name: 'k', sessionId: 'p/k' }), { maxLength: 20 }), (events) => {
        let state = INITIAL_SESSION_STATE;
        for (const event of events) {
          try {
            state = applySessionEvent(state, event);
          } catch {
            // A second spawn of "k" is refused by the fold itself; skip it.
          }
        }
        assertCarriedState(JSON.parse(JSON.stringify(state)));
      }),
    );
  });

  test('broken carried state is refused naming the field', () => {
    const good = foldSession([write('a', 'u1')]);
    assert.throws(() => assertCarriedState({ ...good, version: -1 }), /carried into this run: version must be a non-negative integer/);
    assert.throws(() => assertCarriedState({ ...good, todos: [{ content: ' a', status: 'pending' }] }), /carried into this run: todos\[0\]\.content/);
    assert.throws(() => assertCarriedState({ ...good, children: [{ name: 'a' }] }), /children\[0\]/);
    assert.throws(() => assertCarriedState({ ...good, recentWrites: 'none' }), /recentWrites/);
    assert.throws(() => assertCarriedState(null), /must be an object/);
  });
});
