/**
 * The session's wire contract: every message a client can send or ask, with its wire name and
 * its input and result types. Importing this file does not import the workflow, so any client
 * can use it. Wire names are what other Temporal clients (the `temporal` CLI, other SDKs) use.
 */
import { defineQuery, defineSignal, defineUpdate } from './message-definitions';
import type { TodoCounts, TodoItem, TodoList, TodoWriteArgs } from '../src/todo';
import type { SessionInput, SessionSnapshot, SubagentSpawnInput, TodoWriteResult } from '../src/session';
import type { ToolDecisionInput, UserMessageInput } from '../src/session/agent-requests';
import type { ChatMessage, TurnOutcome, Usage } from '../src/session/agent-state';
import type { ToolAcceptInput, ToolAcceptResult } from '../src/session/tool-pins';

/** The workflow type of a session, as other clients name it. */
export const SESSION_WORKFLOW_TYPE = 'agentSession';

/** Applied events per run after which a session continues as new, unless its input says otherwise. */
export const DEFAULT_CONTINUE_AS_NEW_AFTER = 500;

/**
 * Input of a session run. Empty for a fresh top-level session; checked by the workflow against
 * what Temporal says about the run before anything in it is used.
 */
export type AgentSessionInput = SessionInput;

/**
 * The `todo_write` Update's optional second argument, as it travels: options of a write that
 * are not part of the model-facing tool arguments. (The client library's `TodoWriteOptions`
 * adds the update id, which Temporal carries beside the arguments.)
 */
export interface TodoWriteUpdateOptions {
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
  /** The child's final answer, when it ran its own agent loop. */
  answer?: string;
}

/** What `user/message` answers. */
export interface UserMessageResult {
  /** The message's number in this session (1, 2, …). */
  messageId: number;
  /** `false` when it starts a turn now; `true` when it waits for the running turn to end. */
  queued: boolean;
  /** Messages ahead of it. */
  ahead: number;
}

/** What `tool/approve` and `tool/deny` answer. */
export interface ToolDecisionResult {
  callId: string;
  decision: 'approved' | 'denied';
}

/** The conversation of a session's agent loop. */
export interface Transcript {
  sessionId: string;
  /** Every message kept, oldest first (older ones may have been dropped to fit the context). */
  messages: ChatMessage[];
  /** Whether older messages were dropped. */
  compacted: boolean;
  usage: Usage;
  lastTurn: TurnOutcome | null;
  /**
   * The turns that ended last, oldest first (at most 12), each with its `traceId` when its
   * request was traced. Absent in the answer of a worker built before it was added.
   */
  recentTurns?: TurnOutcome[];
}

/**
 * `todo_write`: replace the session's list with a whole new one. An Update, not a Signal,
 * because its validator can refuse a bad list before anything reaches history; a signal is
 * written to history the moment it arrives. The optional second argument carries options
 * that are not the model's (`expectedVersion`).
 */
export const todoWriteUpdate = defineUpdate<TodoWriteResult, [TodoWriteArgs, TodoWriteUpdateOptions?]>('todo_write');

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

/**
 * `user/message`: give the session's agent a message. It starts a turn at once, or — while a
 * turn runs — waits for the next one (messages are never lost and never steer a turn midway).
 * Refused while the session is closed, or when the text is empty or too long.
 */
export const userMessageUpdate = defineUpdate<UserMessageResult, [UserMessageInput]>('user/message');

/** `turn/interrupt`: cancel the running model call and end the turn (`interrupted`); the list stays. */
export const turnInterruptUpdate = defineUpdate<TurnOutcome | null, [SessionMessageInput]>('turn/interrupt');

/** `tool/approve`: let a tool call that waits for a person run. */
export const toolApproveUpdate = defineUpdate<ToolDecisionResult, [ToolDecisionInput]>('tool/approve');

/** `tool/deny`: refuse a tool call that waits for a person; the model reads the denial as the tool's result. */
export const toolDenyUpdate = defineUpdate<ToolDecisionResult, [ToolDecisionInput]>('tool/deny');

/**
 * `tool/accept`: trust the new definitions of tools the session withholds because they changed
 * after it first offered them (all of them, or those named); they are offered again from the
 * next turn. Refused (`no-withheld-tool`) for a name that is not withheld.
 */
export const toolAcceptUpdate = defineUpdate<ToolAcceptResult, [ToolAcceptInput]>('tool/accept');

/** `transcript`: the agent loop's conversation. */
export const transcriptQuery = defineQuery<Transcript>('transcript');

/** `todos`: the current list, or `null` when the current turn has none. */
export const todosQuery = defineQuery<TodoList>('todos');

/** `session`: turn, list, counts, version, parent and children of the session. */
export const sessionQuery = defineQuery<SessionSnapshot>('session');

/**
 * `session/carried`: the input the session would continue as new with now (its whole state),
 * which `release promote` runs through the new build's checks before it moves anyone.
 */
export const carriedQuery = defineQuery<SessionInput>('session/carried');

/**
 * `session/wake`: changes no state; asks the session to check, at its next turn boundary (at once
 * when idle), whether its build is still the one its deployment routes to, and to move if not.
 * `release promote` sends it to every open session of the other builds.
 */
export const sessionWakeSignal = defineSignal<[SessionMessageInput]>('session/wake');

/** The workflow type of `release promote`'s check, run on the new build (see {@link releaseCheck}). */
export const RELEASE_CHECK_WORKFLOW_TYPE = 'releaseCheck';

/** The workflow type that computes the state a fork starts from, on the worker side (`workflows/fork-point.ts`). */
export const FORK_POINT_WORKFLOW_TYPE = 'forkPoint';

export type { ChatMessage, SessionSnapshot, SubagentSpawnInput, ToolDecisionInput, TodoItem, TodoList, TodoWriteResult, TurnOutcome, Usage, UserMessageInput };
