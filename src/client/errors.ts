import type { RejectionProblem, RejectionRule } from '../todo';

/** Base class of every error the client library throws on purpose. */
export class AgentSessionsError extends Error {
  override readonly name: string = 'AgentSessionsError';
}

/**
 * Thrown by `todoWrite` when the session's validator refused the list. Nothing reached
 * history. `message` is the rule's own sentence, ready to hand back to the model.
 */
export class TodoRejectedError extends AgentSessionsError {
  override readonly name = 'TodoRejectedError';
  constructor(
    message: string,
    /** The first broken rule, e.g. `duplicate-content`. */
    readonly rule: RejectionRule,
    /** Every problem found, with its path. */
    readonly problems: readonly RejectionProblem[],
  ) {
    super(message);
  }
}

/** Thrown when no session has the given id. */
export class SessionNotFoundError extends AgentSessionsError {
  override readonly name = 'SessionNotFoundError';
  constructor(readonly sessionId: string) {
    super(`no session "${sessionId}": start it first (agent-sessions start ${sessionId})`);
  }
}

/** Thrown when a message other than a query is sent to a session that has been closed. */
export class SessionClosedError extends AgentSessionsError {
  override readonly name = 'SessionClosedError';
  constructor(readonly sessionId: string) {
    super(`session "${sessionId}" is closed; its list and history stay readable, but it takes no more writes or turns`);
  }
}

/** Thrown when a call names no session: a todo list always belongs to one. */
export class MissingSessionIdError extends AgentSessionsError {
  override readonly name = 'MissingSessionIdError';
  constructor() {
    super('a session id is required: todo_write needs an owning session and never writes nowhere');
  }
}
