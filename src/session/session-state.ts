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

/**
 * An applied write's update id and what it answered, kept so a retry can be answered without
 * applying it again: `[updateId, version, pending, in_progress, completed]` (the message is
 * rendered again from the counts). Compact, because receipts are carried into every new run.
 */
export type WriteReceipt = [updateId: string, version: number, pending: number, inProgress: number, completed: number];

/** A receipt as runs of the first release carried it. */
export interface LegacyWriteReceipt {
  updateId: string;
  result: TodoWriteResult;
}

/**
 * How many recent write receipts a session carries into a new run. Temporal itself answers a
 * retried update id within one run; receipts matter only for a retry that crosses a
 * continue-as-new. At most 10 updates are in flight per workflow, so every write whose answer
 * could have been lost at the boundary is among the last 10; 128 leave room for clients that
 * retry much later (an HTTP caller told the outcome is unknown) at twelve times that.
 */
export const RECENT_WRITES_KEPT = 128;

/** How many receipts runs of the first release carried; a run that starts with that many keeps them. */
export const LEGACY_RECENT_WRITES_KEPT = 256;

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

/** What a write already applied under `updateId` answered, if its receipt is still kept. */
export function findReceipt(state: SessionState, updateId: string | undefined): TodoWriteResult | undefined {
  if (updateId === undefined) return undefined;
  const receipt = state.recentWrites.find(([id]) => id === updateId);
  if (receipt === undefined) return undefined;
  const [, version, pending, in_progress, completed] = receipt;
  const counts = { pending, in_progress, completed };
  return { ...counts, message: renderCounts(counts), version };
}

/** The receipt of the write that produced `state`. */
export function receiptOf(updateId: string, state: SessionState): WriteReceipt {
  const { pending, in_progress, completed } = countTodos(state.todos);
  return [updateId, state.version, pending, in_progress, completed];
}

/** The result a write returns for the state it produced. */
export function writeResult(state: SessionState): TodoWriteResult {
  const counts = countTodos(state.todos);
  return { ...counts, message: renderCounts(counts), version: state.version };
}
