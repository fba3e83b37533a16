/**
 * A whole-list snapshot, as logged. `todos` is typed `unknown` on purpose: the fold runs the
 * durable invariant on it rather than trusting where it came from.
 */
export interface TodoWriteEvent {
  type: 'todo/write';
  todos: unknown;
  /** Names the event in an invariant failure, e.g. `todo/write at event 12`. */
  label?: string;
}

/** A new turn begins; its plan starts empty. */
export interface TurnStartEvent {
  type: 'turn/start';
}

/** The turn ends; the finished list stays visible. */
export interface TurnEndEvent {
  type: 'turn/end';
}

/** The session was closed; no further writes are accepted. */
export interface SessionCloseEvent {
  type: 'session/close';
}

/** Everything a session's log can hold, in the seed's event names. */
export type SessionEvent = TodoWriteEvent | TurnStartEvent | TurnEndEvent | SessionCloseEvent;
