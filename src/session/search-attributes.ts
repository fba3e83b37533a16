import { countTodos } from '../todo/counts';
import type { TodoList } from '../todo/todo-item';
import { jsonUtf8Length } from '../todo/utf8';
import type { SessionState } from './session-state';
import type { SessionParent } from './snapshot';

/**
 * The custom search attributes a session keeps up to date with every applied event, so a list
 * of sessions, or the subagents of a tree, is one visibility call instead of one query per
 * session. Within the limits of Temporal's SQL visibility (PostgreSQL, SQLite: at most 3 Int,
 * 3 Double, 3 Bool, 3 Datetime, 10 Keyword and 3 KeywordList custom attributes per namespace):
 * the three Int columns hold the counts, so the number of subagents is a Double; the contents of
 * the todos in progress are a KeywordList, because PostgreSQL stores a Keyword in 255 characters
 * and a todo may have 1,000.
 */
export const SESSION_SEARCH_ATTRIBUTES = Object.freeze({
  AgentSessionParent: 'Keyword',
  AgentSessionPending: 'Int',
  AgentSessionInProgress: 'Int',
  AgentSessionCompleted: 'Int',
  AgentSessionVersion: 'Double',
  AgentSessionUpdatedAt: 'Datetime',
  AgentSessionClosed: 'Bool',
  AgentSessionInProgressContent: 'KeywordList',
  AgentSessionSubagents: 'Double',
} as const);

/**
 * How much of the todos in progress a session's search attribute holds: each content up to
 * {@link IN_PROGRESS_CONTENT_CHARS} characters (longer ones cut, ending in "…"), in list order,
 * as many as fit in {@link IN_PROGRESS_CONTENT_BYTES} bytes of JSON. Temporal refuses a search
 * attribute value over 2 KB, and a refused upsert fails the workflow task, so the value stays well
 * below whatever a list holds; `AgentSessionInProgress` still counts every one.
 */
export const IN_PROGRESS_CONTENT_CHARS = 200;
/** See {@link IN_PROGRESS_CONTENT_CHARS}. */
export const IN_PROGRESS_CONTENT_BYTES = 1024;

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
  /** The contents of the todos in progress, as much as fits (see {@link inProgressContent}). */
  AgentSessionInProgressContent: string[];
  /** How many subagents the session has spawned. */
  AgentSessionSubagents: number;
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
    AgentSessionInProgressContent: inProgressContent(state.todos),
    AgentSessionSubagents: state.children.length,
  };
}

/**
 * The contents of the todos in progress as a search attribute holds them: in list order, each cut
 * to {@link IN_PROGRESS_CONTENT_CHARS} characters (counted as code points, so no character is
 * split), as many as fit in {@link IN_PROGRESS_CONTENT_BYTES} bytes of JSON. Pure, so a replay
 * computes the same value.
 *
 * @example inProgressContent([{ content: 'Run lint', status: 'in_progress' }, { content: 'Ship', status: 'pending' }]) // ['Run lint']
 */
export function inProgressContent(todos: TodoList): string[] {
  const kept: string[] = [];
  for (const todo of todos ?? []) {
    if (todo.status !== 'in_progress') continue;
    const chars = [...todo.content];
    const text = chars.length > IN_PROGRESS_CONTENT_CHARS ? `${chars.slice(0, IN_PROGRESS_CONTENT_CHARS - 1).join('')}…` : todo.content;
    if (jsonUtf8Length([...kept, text]) > IN_PROGRESS_CONTENT_BYTES) break;
    kept.push(text);
  }
  return kept;
}

/** The attributes whose value differs between two sets (all of `next` when there was none). */
export function changedIndexValues(previous: SessionIndexValues | undefined, next: SessionIndexValues): Partial<SessionIndexValues> {
  const changed: Partial<Record<keyof SessionIndexValues, unknown>> = {};
  for (const key of Object.keys(next) as Array<keyof SessionIndexValues>) {
    const a = previous?.[key];
    const b = next[key];
    const same =
      a instanceof Date && b instanceof Date
        ? a.getTime() === b.getTime()
        : Array.isArray(a) && Array.isArray(b)
          ? a.length === b.length && a.every((item, index) => item === b[index])
          : a === b;
    if (previous === undefined || !same) changed[key] = b;
  }
  return changed as Partial<SessionIndexValues>;
}
