import { countTodos, type TodoCounts } from '../todo';
import type { SessionState } from './session-state';

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
