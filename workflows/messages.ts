/**
 * The session's wire contract: every message a client can send or ask, with its wire name and
 * its input and result types. Importing this file does not import the workflow, so any client
 * can use it. Wire names are what other Temporal clients (the `temporal` CLI, other SDKs) use.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { SessionSnapshot, TodoCounts, TodoItem, TodoList, TodoWriteArgs } from '../src/todo';

/** The workflow type of a session, as other clients name it. */
export const SESSION_WORKFLOW_TYPE = 'agentSession';

/** Input of a new session run. Empty for a fresh session. */
export interface AgentSessionInput {
  /** Free-form note shown by listings, e.g. which agent this session belongs to. */
  title?: string;
}

/** What an accepted `todo_write` returns: the counts and the line a model reads. */
export interface TodoWriteResult extends TodoCounts {
  /** `Updated todo list: 2 pending, 1 in progress, 0 completed` */
  message: string;
  /** The session's version after this write. */
  version: number;
}

/** Optional input of the turn signals and of `close`. Foreign clients may send nothing. */
export interface SessionMessageInput {
  /** Why, for people reading the history. */
  reason?: string;
}

/**
 * `todo_write`: replace the session's list with a whole new one. An Update, not a Signal,
 * because its validator can refuse a bad list before anything reaches history; a signal is
 * written to history the moment it arrives.
 */
export const todoWriteUpdate = defineUpdate<TodoWriteResult, [TodoWriteArgs]>('todo_write');

/** `turn/start`: a new turn begins and its list starts empty (`null`). */
export const turnStartSignal = defineSignal<[SessionMessageInput]>('turn/start');

/** `turn/end`: the turn ends; the list stays as it is so the finished plan remains visible. */
export const turnEndSignal = defineSignal<[SessionMessageInput]>('turn/end');

/**
 * `close`: end the session. An Update so the caller learns it took effect; returns the final
 * state. Closing a closed session returns the same state again.
 */
export const closeUpdate = defineUpdate<SessionSnapshot, [SessionMessageInput]>('close');

/** `todos`: the current list, or `null` when the current turn has none. */
export const todosQuery = defineQuery<TodoList>('todos');

/** `session`: turn, list, counts and version of the session. */
export const sessionQuery = defineQuery<SessionSnapshot>('session');

export type { SessionSnapshot, TodoItem, TodoList };
