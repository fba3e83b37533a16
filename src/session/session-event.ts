import type { TodoCounts } from '../todo/todo-item';

/** Fields every event may carry. */
interface EventBase {
  /** When it happened (ISO 8601): workflow time live, the history event's time offline. */
  at?: string;
}

/**
 * A whole-list snapshot, as logged. `todos` is typed `unknown` on purpose: the fold runs the
 * durable invariant on it rather than trusting where it came from.
 */
export interface TodoWriteEvent extends EventBase {
  type: 'todo/write';
  todos: unknown;
  /** The Temporal update id; a write whose id was already applied is a retry and changes nothing. */
  updateId?: string;
  /** Names the event in an invariant failure, e.g. `todo/write at event 12`. */
  label?: string;
}

/** A new turn begins; its plan starts empty. */
export interface TurnStartEvent extends EventBase {
  type: 'turn/start';
}

/** The turn ends; the finished list stays visible. */
export interface TurnEndEvent extends EventBase {
  type: 'turn/end';
}

/** The session was closed; no further writes are accepted. */
export interface SessionCloseEvent extends EventBase {
  type: 'session/close';
}

/** A subagent was started as a child session. */
export interface SubagentSpawnEvent extends EventBase {
  type: 'subagent/spawn';
  /** Unique within the parent. */
  name: string;
  /** The child's session id. */
  sessionId: string;
  /** What the subagent was asked to do, if given. */
  task?: string;
}

/** A child session reported that it closed, with its final counts. */
export interface SubagentClosedEvent extends EventBase {
  type: 'subagent/closed';
  sessionId: string;
  counts: TodoCounts;
  /** The subagent's final answer, when it ran its own agent loop (untrusted: a signal's input). */
  answer?: unknown;
}

/**
 * A signal the session received and does not handle: a `todo_write` sent as a Signal (which
 * cannot be validated before it is logged, so it is never applied), an unknown name, a child
 * report that names no open subagent. Logged by Temporal whatever we do; kept visible in the
 * session's state so that nothing a sender does vanishes without a word.
 */
export interface SignalIgnoredEvent extends EventBase {
  type: 'signal/ignored';
  /** The signal's name as sent. */
  name: string;
  /** Why it was not applied and what to send instead. */
  reason: string;
}

/** Everything a session's log can hold, in the seed's event names. */
export type SessionEvent =
  | TodoWriteEvent
  | TurnStartEvent
  | TurnEndEvent
  | SessionCloseEvent
  | SubagentSpawnEvent
  | SubagentClosedEvent
  | SignalIgnoredEvent;
