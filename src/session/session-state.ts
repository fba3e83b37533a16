import { countTodos, renderCounts } from '../todo/counts';
import { type TodoCounts, type TodoList } from '../todo/todo-item';
import type { IgnoredSignal } from './ignored-signal';

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
  /** The child's final answer, when it ran its own agent loop and reported one. */
  answer?: string;
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
