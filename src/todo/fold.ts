import { countTodos, renderCounts } from './counts';
import { cut, IGNORED_SIGNALS_KEPT, type IgnoredSignal } from './ignored-signal';
import { assertTodoInvariant, InvariantViolation } from './invariant';
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

/** What an accepted `todo_write` returns: the counts, the line a model reads, the new version. */
export interface TodoWriteResult extends TodoCounts {
  /** `Updated todo list: 2 pending, 1 in progress, 0 completed` */
  message: string;
  /** The session's version after this write. */
  version: number;
}

/** A subagent of a session, as its parent knows it. */
export interface ChildSession {
  name: string;
  sessionId: string;
  task: string | null;
  /** Whether the child reported that it closed. */
  closed: boolean;
  /** The child's final counts, once closed. */
  counts: TodoCounts | null;
}

/** An applied write's update id and result, kept so a retry can be answered without applying it again. */
export interface WriteReceipt {
  updateId: string;
  result: TodoWriteResult;
}

/** How many recent write receipts a session keeps (and carries into a new run). */
export const RECENT_WRITES_KEPT = 256;

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
  /** Subagents started from this session, in spawn order. */
  children: ChildSession[];
  /** When the last event was applied (ISO 8601), or `null` before any. */
  updatedAt: string | null;
  /** Receipts of the most recent writes, newest last, for idempotent retries. */
  recentWrites: WriteReceipt[];
  /**
   * Signals received and not applied, newest last (at most {@link IGNORED_SIGNALS_KEPT}): a
   * `todo_write` sent as a Signal, an unknown name, a report from no open subagent. Listing one
   * changes nothing else, not even the version: a hostile sender cannot make writers stale.
   */
  ignoredSignals: IgnoredSignal[];
}

/** The state of a session before any event. */
export const INITIAL_SESSION_STATE: Readonly<SessionState> = Object.freeze({
  turn: 0,
  turnOpen: false,
  todos: null,
  version: 0,
  closed: false,
  children: [],
  updatedAt: null,
  recentWrites: [],
  ignoredSignals: [],
});

/** The receipt of a write already applied under `updateId`, if it is still remembered. */
export function findReceipt(state: SessionState, updateId: string | undefined): WriteReceipt | undefined {
  if (updateId === undefined) return undefined;
  return state.recentWrites.find((receipt) => receipt.updateId === updateId);
}

/** The result a write returns for the state it produced. */
export function writeResult(state: SessionState): TodoWriteResult {
  const counts = countTodos(state.todos);
  return { ...counts, message: renderCounts(counts), version: state.version };
}

/**
 * Applies one event to a session's state, returning a new state (the input is not changed).
 * Pure: the same events in the same order give the same state, live, on replay and offline.
 * Some events change nothing at all (see {@link changesNothing}); the same state comes back.
 * A signal the session does not handle only adds an entry to `ignoredSignals`.
 *
 * @throws InvariantViolation when a write's list breaks the invariant or a spawn repeats a name.
 */
export function applySessionEvent(state: SessionState, event: SessionEvent): SessionState {
  const ignored = ignoredReason(state, event);
  if (ignored !== undefined) {
    const name = event.type === 'signal/ignored' ? event.name : event.type;
    const entry = { name: cut(String(name), 100), at: event.at ?? null, reason: cut(ignored, 500) };
    return { ...state, ignoredSignals: [...(state.ignoredSignals ?? []), entry].slice(-IGNORED_SIGNALS_KEPT) };
  }
  if (changesNothing(state, event)) return state;
  const next: SessionState = {
    ...state,
    todos: foldTodos(state.todos, event),
    version: state.version + 1,
    updatedAt: event.at ?? state.updatedAt,
  };
  switch (event.type) {
    case 'todo/write':
      if (event.updateId !== undefined) {
        next.recentWrites = [...state.recentWrites, { updateId: event.updateId, result: writeResult(next) }].slice(-RECENT_WRITES_KEPT);
      }
      return next;
    case 'turn/start':
      return { ...next, turn: state.turn + 1, turnOpen: true };
    case 'turn/end':
      return { ...next, turnOpen: false };
    case 'session/close':
      return { ...next, turnOpen: false, closed: true };
    case 'subagent/spawn':
      if (state.children.some((child) => child.name === event.name || child.sessionId === event.sessionId)) {
        throw new InvariantViolation(`subagent/spawn of "${event.name}"`, 'a subagent with that name already exists');
      }
      return {
        ...next,
        children: [...state.children, { name: event.name, sessionId: event.sessionId, task: event.task ?? null, closed: false, counts: null }],
      };
    case 'subagent/closed':
      return {
        ...next,
        children: state.children.map((child) =>
          child.sessionId === event.sessionId ? { ...child, closed: true, counts: reportedCounts(event.counts) } : child,
        ),
      };
    case 'signal/ignored':
      return state; // handled above
  }
}

/**
 * Why a signal is not applied, or `undefined` when it is (or is not a signal). Signals cannot be
 * refused before they are logged, so the ones that cannot be applied are listed instead of
 * vanishing: unknown names, a report naming no open subagent, a turn sent to a closed session.
 */
function ignoredReason(state: SessionState, event: SessionEvent): string | undefined {
  switch (event.type) {
    case 'signal/ignored':
      return event.reason;
    case 'subagent/closed':
      if (typeof event.sessionId !== 'string') return 'subagent/closed must carry {"sessionId", "counts"}; this report names no session';
      if (!state.children.some((child) => child.sessionId === event.sessionId)) {
        return `subagent/closed reports ${JSON.stringify(cut(event.sessionId, 100))}, which is not a subagent of this session`;
      }
      if (!state.children.some((child) => child.sessionId === event.sessionId && !child.closed)) {
        return `subagent/closed reports ${JSON.stringify(cut(event.sessionId, 100))}, which already reported that it closed`;
      }
      return undefined;
    case 'turn/start':
    case 'turn/end':
      return state.closed ? `${event.type} arrived after the session closed; a closed session starts and ends no turns` : undefined;
    default:
      return undefined;
  }
}

/**
 * Events that leave a session exactly as it is, version included: a retried write (its update
 * id already applied), a close or write once the session is closed (a signal can still arrive
 * while a closing parent waits for its subagents). A child that really started is recorded
 * even after its parent closed, so that the parent closes it too.
 */
function changesNothing(state: SessionState, event: SessionEvent): boolean {
  if (state.closed && event.type !== 'subagent/closed' && event.type !== 'subagent/spawn') return true;
  return event.type === 'todo/write' && findReceipt(state, event.updateId) !== undefined;
}

function reportedCounts(value: unknown): TodoCounts | null {
  const counts = value as Partial<Record<keyof TodoCounts, unknown>> | null | undefined;
  const valid = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
  if (counts === null || typeof counts !== 'object') return null;
  const { pending, in_progress, completed } = counts;
  return valid(pending) && valid(in_progress) && valid(completed) ? { pending, in_progress, completed } : null;
}

/** Folds a whole event sequence from the initial state (or from `from`). */
export function foldSession(events: Iterable<SessionEvent>, from: SessionState = INITIAL_SESSION_STATE): SessionState {
  let state = from;
  for (const event of events) state = applySessionEvent(state, event);
  return state;
}

/** Where a session sits in a tree of agents. */
export interface SessionParent {
  sessionId: string;
  /** The name the parent gave this subagent. */
  name: string;
}

/** A session's state as the `session` query answers it. */
export interface SessionSnapshot extends Omit<SessionState, 'recentWrites'> {
  /** The session id, which is also the workflow id. */
  sessionId: string;
  counts: TodoCounts;
  /** The parent session, for a subagent; `null` for a top-level session. */
  parent: SessionParent | null;
  /** What this session was asked to do, if its starter said. */
  task: string | null;
}

/** Adds the id, the parent and the counts to a state, leaving out the write receipts. */
export function snapshotSession(
  sessionId: string,
  state: SessionState,
  about: { parent?: SessionParent | null; task?: string | null } = {},
): SessionSnapshot {
  const { recentWrites: _receipts, ...rest } = state;
  return { sessionId, ...rest, counts: countTodos(state.todos), parent: about.parent ?? null, task: about.task ?? null };
}
