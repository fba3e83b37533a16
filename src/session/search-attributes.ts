import { countTodos } from '../todo/counts';
import type { SessionState } from './session-state';
import type { SessionParent } from './snapshot';

/**
 * The custom search attributes a session keeps up to date with every applied event, so a list
 * of sessions is one visibility call instead of one query per session. Within the limits of
 * Temporal's SQL visibility (PostgreSQL, SQLite: at most 3 Int, 3 Double, 3 Bool, 3 Datetime and
 * 10 Keyword custom attributes per namespace).
 */
export const SESSION_SEARCH_ATTRIBUTES = Object.freeze({
  AgentSessionParent: 'Keyword',
  AgentSessionPending: 'Int',
  AgentSessionInProgress: 'Int',
  AgentSessionCompleted: 'Int',
  AgentSessionVersion: 'Double',
  AgentSessionUpdatedAt: 'Datetime',
  AgentSessionClosed: 'Bool',
} as const);

/** The name of one of {@link SESSION_SEARCH_ATTRIBUTES}. */
export type SessionSearchAttribute = keyof typeof SESSION_SEARCH_ATTRIBUTES;

/** The values a session's search attributes take for a state (the parent only when there is one). */
export interface SessionIndexValues {
  AgentSessionParent?: string;
  AgentSessionPending: number;
  AgentSessionInProgress: number;
  AgentSessionCompleted: number;
  AgentSessionVersion: number;
  AgentSessionUpdatedAt: Date | null;
  AgentSessionClosed: boolean;
}

/** What a session's search attributes should say for `state`. */
export function sessionIndexValues(state: SessionState, parent: SessionParent | null): SessionIndexValues {
  const counts = countTodos(state.todos);
  return {
    ...(parent !== null ? { AgentSessionParent: parent.sessionId } : {}),
    AgentSessionPending: counts.pending,
    AgentSessionInProgress: counts.in_progress,
    AgentSessionCompleted: counts.completed,
    AgentSessionVersion: state.version,
    AgentSessionUpdatedAt: state.updatedAt === null ? null : new Date(state.updatedAt),
    AgentSessionClosed: state.closed,
  };
}

/** The attributes whose value differs between two sets (all of `next` when there was none). */
export function changedIndexValues(previous: SessionIndexValues | undefined, next: SessionIndexValues): Partial<SessionIndexValues> {
  const changed: Partial<Record<keyof SessionIndexValues, unknown>> = {};
  for (const key of Object.keys(next) as Array<keyof SessionIndexValues>) {
    const a = previous?.[key];
    const b = next[key];
    const same = a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
    if (previous === undefined || !same) changed[key] = b;
  }
  return changed as Partial<SessionIndexValues>;
}
