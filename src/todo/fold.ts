import { countTodos } from './counts';
import { assertTodoInvariant } from './invariant';
import type { SessionEvent } from './session-event';
import type { TodoCounts, TodoList } from './todo-item';

/**
 * The `todos` projection (DESIGN §6): one step of the fold.
 * - `todo/write` → the event's list (last write wins), after the durable invariant;
 * - `turn/start` → `null`, a new turn starts with no plan;
 * - anything else, `turn/end` included → unchanged, so the finished list stays visible.
 *
 * @throws InvariantViolation when a `todo/write` holds a list that breaks the invariant.
 */
export function foldTodos(todos: TodoList, event: SessionEvent): TodoList {
  switch (event.type) {
    case 'todo/write':
      assertTodoInvariant(event.todos, event.label ?? 'todo/write');
      return event.todos;
    case 'turn/start':
      return null;
    default:
      return todos;
  }
}

/** Everything a session knows, derived from its events alone. */
export interface SessionState {
  /** Turns started so far; 0 before the first. */
  turn: number;
  /** Whether the latest turn has started and not yet ended. */
  turnOpen: boolean;
  /** The current list, or `null` when the current turn has none. */
  todos: TodoList;
  /** Grows by one with every applied event: a cheap "has anything changed" for readers. */
  version: number;
  /** Closed sessions accept no more writes. */
  closed: boolean;
}

/** The state of a session before any event. */
export const INITIAL_SESSION_STATE: Readonly<SessionState> = Object.freeze({
  turn: 0,
  turnOpen: false,
  todos: null,
  version: 0,
  closed: false,
});

/**
 * Applies one event to a session's state, returning a new state (the input is not changed).
 * Pure: the same events in the same order give the same state, live, on replay and offline.
 *
 * @throws InvariantViolation as {@link foldTodos} does.
 */
export function applySessionEvent(state: SessionState, event: SessionEvent): SessionState {
  const todos = foldTodos(state.todos, event);
  const version = state.version + 1;
  switch (event.type) {
    case 'turn/start':
      return { ...state, todos, version, turn: state.turn + 1, turnOpen: true };
    case 'turn/end':
      return { ...state, todos, version, turnOpen: false };
    case 'session/close':
      return { ...state, todos, version, turnOpen: false, closed: true };
    default:
      return { ...state, todos, version };
  }
}

/** Folds a whole event sequence from the initial state (or from `from`). */
export function foldSession(events: Iterable<SessionEvent>, from: SessionState = INITIAL_SESSION_STATE): SessionState {
  let state = from;
  for (const event of events) state = applySessionEvent(state, event);
  return state;
}

/** A session's state as the `session` query answers it: the state plus the list's counts. */
export interface SessionSnapshot extends SessionState {
  /** The session id, which is also the workflow id. */
  sessionId: string;
  counts: TodoCounts;
}

/** Adds the id and the counts to a state. */
export function snapshotSession(sessionId: string, state: SessionState): SessionSnapshot {
  return { sessionId, ...state, counts: countTodos(state.todos) };
}
