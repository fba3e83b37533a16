import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { foldTodos, InvariantViolation, type TodoItem } from '../../src/todo';
import { thrown } from './domain-fixtures';
import {
  applySessionEvent,
  foldSession,
  INITIAL_SESSION_STATE,
  NO_USAGE,
  snapshotSession,
  type SessionEvent,
  type SessionState,
} from '../../src/session';

const A: TodoItem[] = [
  { content: 'Plan', status: 'completed' },
  { content: 'Build', status: 'in_progress' },
];
const B: TodoItem[] = [
  { content: 'Plan', status: 'completed' },
  { content: 'Build', status: 'completed' },
  { content: 'Ship', status: 'pending' },
];

const write = (todos: unknown, label?: string): SessionEvent =>
  label === undefined ? { type: 'todo/write', todos } : { type: 'todo/write', todos, label };
const turnStart: SessionEvent = { type: 'turn/start' };
const turnEnd: SessionEvent = { type: 'turn/end' };
const close: SessionEvent = { type: 'session/close' };

function invariantViolation(fn: () => unknown): InvariantViolation {
  return thrown(InvariantViolation, fn, 'expected an InvariantViolation');
}

describe('foldTodos', () => {
  test('a todo/write gives its list', () => {
    assert.deepStrictEqual(foldTodos(null, write(A)), A);
  });

  test('the last write wins', () => {
    assert.deepStrictEqual(foldTodos(foldTodos(null, write(A)), write(B)), B);
  });

  test('a write of an empty list gives an empty list, not null', () => {
    assert.deepStrictEqual(foldTodos(A, write([])), []);
  });

  test('a turn/start clears the list to null', () => {
    assert.equal(foldTodos(A, turnStart), null);
  });

  test('a turn/end leaves the list as it was', () => {
    assert.deepStrictEqual(foldTodos(A, turnEnd), A);
    assert.equal(foldTodos(null, turnEnd), null);
  });

  test('a session/close leaves the list as it was', () => {
    assert.deepStrictEqual(foldTodos(B, close), B);
  });

  test('a write with several in_progress todos is applied whatever the deployment policy', () => {
    const parallel: TodoItem[] = [
      { content: 'a', status: 'in_progress' },
      { content: 'b', status: 'in_progress' },
    ];
    assert.deepStrictEqual(foldTodos(null, write(parallel)), parallel);
  });

  test('a write breaking the invariant throws an InvariantViolation naming the event label', () => {
    const error = invariantViolation(() => foldTodos(A, write([{ content: ' x', status: 'pending' }], 'todo/write at event 7')));
    assert.equal(error.where, 'todo/write at event 7');
    assert.ok(error.message.includes('todo/write at event 7'), error.message);
    assert.ok(error.message.includes('todos[0].content'), error.message);
  });

  test('an unlabelled write breaking the invariant is named todo/write', () => {
    const error = invariantViolation(() => foldTodos(null, write('not a list')));
    assert.equal(error.where, 'todo/write');
    assert.ok(error.message.includes('todo/write'), error.message);
  });

  test('each broken condition in a logged write fails the fold', () => {
    const broken: unknown[] = [
      null,
      [1],
      [{ content: 'a', status: 'pending', priority: 1 }],
      [{ content: '', status: 'pending' }],
      [{ content: 'a ', status: 'pending' }],
      [
        { content: 'a', status: 'pending' },
        { content: 'a', status: 'pending' },
      ],
      [{ content: 'a', status: 'blocked' }],
    ];
    for (const todos of broken) {
      const error = invariantViolation(() => foldSession([turnStart, write(todos, 'todo/write #2')]));
      assert.ok(error.message.includes('todo/write #2'), error.message);
    }
  });
});

describe('applySessionEvent and foldSession', () => {
  test('the initial state has no turn, no list, version 0 and is open', () => {
    assert.deepStrictEqual({ ...INITIAL_SESSION_STATE }, { turn: 0, turnOpen: false, todos: null, version: 0, closed: false, children: [], updatedAt: null, recentWrites: [], ignoredSignals: [] });
    assert.ok(Object.isFrozen(INITIAL_SESSION_STATE));
  });

  test('folding no events gives the initial state', () => {
    assert.deepStrictEqual(foldSession([]), INITIAL_SESSION_STATE);
  });

  test('a turn/start opens a new turn with no list and counts it', () => {
    const state = foldSession([turnStart, write(A), turnEnd, turnStart]);
    assert.equal(state.turn, 2);
    assert.equal(state.turnOpen, true);
    assert.equal(state.todos, null);
  });

  test('a turn/end closes the turn and keeps the finished list visible', () => {
    const state = foldSession([turnStart, write(A), write(B), turnEnd]);
    assert.deepStrictEqual(state, { ...INITIAL_SESSION_STATE, turn: 1, turnOpen: false, todos: B, version: 4, closed: false });
  });

  test('a session/close marks the session closed, ends the turn and keeps the list', () => {
    const state = foldSession([turnStart, write(A), close]);
    assert.deepStrictEqual(state, { ...INITIAL_SESSION_STATE, turn: 1, turnOpen: false, todos: A, version: 3, closed: true });
  });

  test('a write before any turn is kept', () => {
    assert.deepStrictEqual(foldSession([write(A)]), { ...INITIAL_SESSION_STATE, turn: 0, turnOpen: false, todos: A, version: 1, closed: false });
  });

  test('a write leaves the turn counters alone', () => {
    const before = foldSession([turnStart]);
    const after = applySessionEvent(before, write(A));
    assert.equal(after.turn, 1);
    assert.equal(after.turnOpen, true);
    assert.equal(after.closed, false);
  });

  test('the version grows by one with every event, even a repeated write or turn end, but closing twice changes nothing', () => {
    const events = [turnEnd, turnEnd, write(A), write(A), close, close];
    assert.equal(foldSession(events).version, 5);
  });

  test('applying an event returns a new state and leaves the given one unchanged', () => {
    const state: SessionState = { ...INITIAL_SESSION_STATE, turn: 3, turnOpen: true, todos: A, version: 9, closed: false };
    const copy = structuredClone(state);
    const next = applySessionEvent(state, turnStart);
    assert.notEqual(next, state);
    assert.deepStrictEqual(state, copy);
    assert.deepStrictEqual(next, { ...INITIAL_SESSION_STATE, turn: 4, turnOpen: true, todos: null, version: 10, closed: false });
  });

  test('folding from a given state continues from it', () => {
    const from: SessionState = { ...INITIAL_SESSION_STATE, turn: 5, turnOpen: false, todos: A, version: 40, closed: false };
    assert.deepStrictEqual(foldSession([turnStart, write(B)], from), { ...INITIAL_SESSION_STATE, turn: 6, turnOpen: true, todos: B, version: 42, closed: false });
  });

  test('foldSession accepts any iterable of events', () => {
    function* events(): Generator<SessionEvent> {
      yield turnStart;
      yield write(A);
    }
    assert.deepStrictEqual(foldSession(events()), foldSession([turnStart, write(A)]));
  });

  test('a rejected history fails at the offending write, not before', () => {
    const events = [turnStart, write(A, 'todo/write at event 2'), write([{ content: 'x', status: 'x' }], 'todo/write at event 3')];
    assert.deepStrictEqual(foldSession(events.slice(0, 2)).todos, A);
    const error = invariantViolation(() => foldSession(events));
    assert.equal(error.where, 'todo/write at event 3');
  });
});

describe('snapshotSession', () => {
  test('adds the session id and the counts of the current list', () => {
    const state = foldSession([turnStart, write(B)]);
    const { recentWrites: _receipts, ...shown } = state;
    assert.deepStrictEqual(snapshotSession('session-1', state), {
      sessionId: 'session-1',
      ...shown,
      counts: { pending: 1, in_progress: 0, completed: 2 },
      parent: null,
      task: null,
      usage: NO_USAGE,
      forkedFrom: null,
      forkedChildren: [],
      agent: { activity: { state: 'idle' }, queued: 0, pendingApprovals: [], lastTurn: null, recentTurns: [], withheldTools: [], revision: 0 },
    });
  });

  test('counts an absent list as empty', () => {
    assert.deepStrictEqual(snapshotSession('s', INITIAL_SESSION_STATE).counts, { pending: 0, in_progress: 0, completed: 0 });
  });
});
