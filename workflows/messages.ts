/**
 * The session's wire contract: every message a client can send or ask, with its wire name and
 * its input and result types. Importing this file does not import the workflow, so any client
 * can use it. Wire names are what other Temporal clients (the `temporal` CLI, other SDKs) use.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { TodoCounts, TodoItem, TodoList, TodoWriteArgs } from '../src/todo';
import type { SessionInput, SessionSnapshot, SubagentSpawnInput, TodoWriteResult } from '../src/session';

/** The workflow type of a session, as other clients name it. */
export const SESSION_WORKFLOW_TYPE = 'agentSession';

/** Applied events per run after which a session continues as new, unless its input says otherwise. */
export const DEFAULT_CONTINUE_AS_NEW_AFTER = 500;

/**
 * Input of a session run. Empty for a fresh top-level session; checked by the workflow against
 * what Temporal says about the run before anything in it is used.
 */
export type AgentSessionInput = SessionInput;

/** Options of a write that are not part of the model-facing tool arguments. */
export interface TodoWriteOptions {
  /** Refuse the write unless the session is still at this version (optimistic concurrency). */
  expectedVersion?: number;
}

/** Optional input of the turn signals and of closing. Foreign clients may send nothing. */
export interface SessionMessageInput {
  /** Why, for people reading the history. */
  reason?: string;
}

/** What `subagent/spawn` returns. */
export interface SubagentSpawnResult {
  /** The child's session id: `<parent id>/<name>`. */
  sessionId: string;
  name: string;
}

/** What a closing child tells its parent. */
export interface SubagentClosedInput {
  sessionId: string;
  counts: TodoCounts;
}

/**
 * `todo_write`: replace the session's list with a whole new one. An Update, not a Signal,
 * because its validator can refuse a bad list before anything reaches history; a signal is
 * written to history the moment it arrives. The optional second argument carries options
 * that are not the model's (`expectedVersion`).
 */
export const todoWriteUpdate = defineUpdate<TodoWriteResult, [TodoWriteArgs, TodoWriteOptions?]>('todo_write');

/** `turn/start`: a new turn begins and its list starts empty (`null`). */
export const turnStartSignal = defineSignal<[SessionMessageInput]>('turn/start');

/** `turn/end`: the turn ends; the list stays as it is so the finished plan remains visible. */
export const turnEndSignal = defineSignal<[SessionMessageInput]>('turn/end');

/**
 * `close`: end the session (and, first, its open subagents). An Update so the caller learns it
 * took effect; returns the final state. Closing a closed session returns the same state again.
 */
export const closeUpdate = defineUpdate<SessionSnapshot, [SessionMessageInput]>('close');

/** `session/close`: the same as `close`, as a signal: what a parent sends its open subagents. */
export const sessionCloseSignal = defineSignal<[SessionMessageInput]>('session/close');

/** `subagent/spawn`: start a subagent as a child session; returns its session id. */
export const subagentSpawnUpdate = defineUpdate<SubagentSpawnResult, [SubagentSpawnInput]>('subagent/spawn');

/** `subagent/closed`: sent by a closing child to its parent with its final counts. */
export const subagentClosedSignal = defineSignal<[SubagentClosedInput]>('subagent/closed');

/** `todos`: the current list, or `null` when the current turn has none. */
export const todosQuery = defineQuery<TodoList>('todos');

/** `session`: turn, list, counts, version, parent and children of the session. */
export const sessionQuery = defineQuery<SessionSnapshot>('session');

export type { SessionSnapshot, SubagentSpawnInput, TodoItem, TodoList, TodoWriteResult };
