import type { RejectionProblem, RejectionRule } from '../todo';

/**
 * Every kind of failure a user of this library can meet, as a machine-readable code. The CLI
 * maps codes to exit codes and the HTTP service maps them to statuses, each in one place, so no
 * caller ever has to read an error's message to know what happened.
 */
export const ERROR_CODES = [
  /** A rule refused the request (a write or a spawn); `rule` says which. Nothing reached history. */
  'rejected',
  /** No session has that id. */
  'session-not-found',
  /** The session is closed and takes no more writes, turns or spawns. */
  'session-closed',
  /** A new session was asked for (a fork) under an id a session already has: ids are never reused. */
  'session-exists',
  /** The session id is missing or cannot name a session. */
  'invalid-session-id',
  /** The session exists but its workflow task fails, so it cannot answer or apply anything. */
  'session-broken',
  /** The session exists but no worker polls its task queue, so nobody can answer. */
  'no-worker',
  /** A worker polls the session's task queue, but the session did not answer in time. */
  'session-timeout',
  /** Temporal itself could not be reached or did not answer. */
  'temporal-unavailable',
  /** A change was sent but its answer never came: it may or may not have been applied. */
  'outcome-unknown',
  /** A history does not replay against the current workflow code. */
  'replay-failed',
  /** A setting (flag, environment variable, option) is missing or malformed. */
  'invalid-setting',
  /** Input given to a command or endpoint is malformed (not JSON, not UTF-8, wrong shape). */
  'invalid-input',
  /** A release was refused before anything changed: the build is unknown, has no workers, or refuses a session's carried state. */
  'release-refused',
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * Base class of every error this library throws on purpose. `code` says what kind of failure it
 * is; `message` is one sentence a person (or a model) can act on.
 */
export class AgentSessionsError extends Error {
  override readonly name: string = 'AgentSessionsError';
  constructor(
    /** What kind of failure this is; never changes for a given class. */
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * Thrown when a rule refused a request before anything reached history. `message` is the rule's
 * own sentence (every problem, with its place and value), ready to hand back to a model.
 */
export class RequestRejectedError extends AgentSessionsError {
  override readonly name: string = 'RequestRejectedError';
  constructor(
    message: string,
    /** The first broken rule, e.g. `duplicate-content`. */
    readonly rule: RejectionRule,
    /** Every problem found, with its path. */
    readonly problems: readonly RejectionProblem[],
  ) {
    super('rejected', message);
  }
}

/** Thrown by `todoWrite` when the session's validator refused the list. */
export class TodoRejectedError extends RequestRejectedError {
  override readonly name = 'TodoRejectedError';
}

/**
 * Thrown by `spawnSubagent` when the spawn was refused: a malformed or taken name
 * (`subagent-name`, `subagent-exists`), or a child id that another session already holds
 * (`subagent-id-taken`). The parent keeps no trace of a refused spawn.
 */
export class SpawnRejectedError extends RequestRejectedError {
  override readonly name = 'SpawnRejectedError';
}

/** Thrown when no session has the given id. */
export class SessionNotFoundError extends AgentSessionsError {
  override readonly name = 'SessionNotFoundError';
  constructor(
    readonly sessionId: string,
    /** What to do about it, after the colon; by default, to start it. */
    advice = `start it first (agent-sessions start ${sessionId})`,
  ) {
    super('session-not-found', `no session "${sessionId}": ${advice}`);
  }
}

/**
 * Thrown when a new session (a fork) is asked for under an id that a session, running or
 * closed, already has: ids are never reused, so its history stays the whole story of that id.
 */
export class SessionExistsError extends AgentSessionsError {
  override readonly name = 'SessionExistsError';
  constructor(
    readonly sessionId: string,
    /** Whether the session holding the id is still running. */
    readonly running: boolean,
  ) {
    super(
      'session-exists',
      `session "${sessionId}" already exists (${running ? 'running' : 'closed'}); a fork starts a new session and ids are never reused: choose another id`,
    );
  }
}

/** Thrown when a message other than a query is sent to a session that has been closed. */
export class SessionClosedError extends AgentSessionsError {
  override readonly name = 'SessionClosedError';
  constructor(readonly sessionId: string) {
    super('session-closed', `session "${sessionId}" is closed; its list and history stay readable, but it takes no more writes or turns`);
  }
}

/** Thrown when a call names no session: a todo list always belongs to one. */
export class MissingSessionIdError extends AgentSessionsError {
  override readonly name = 'MissingSessionIdError';
  constructor() {
    super('invalid-session-id', 'a session id is required: todo_write needs an owning session and never writes nowhere');
  }
}

/** Thrown when a session id cannot name a session, e.g. a top-level id containing `/`. */
export class InvalidSessionIdError extends AgentSessionsError {
  override readonly name = 'InvalidSessionIdError';
  constructor(
    readonly sessionId: string,
    /** Why, in a clause: `"/" separates a parent from its subagents`. */
    reason: string,
  ) {
    super('invalid-session-id', `session id ${JSON.stringify(sessionId.length > 80 ? `${sessionId.slice(0, 77)}...` : sessionId)} is not allowed: ${reason}`);
  }
}

/**
 * Thrown when a session exists but cannot answer because its workflow task keeps failing (for
 * example a history that breaks the durable invariant). Temporal is fine; the session is not.
 */
export class SessionBrokenError extends AgentSessionsError {
  override readonly name = 'SessionBrokenError';
  constructor(
    readonly sessionId: string,
    /** The workflow task's own failure message, when Temporal recorded one. */
    readonly failure: string | undefined,
    /** How many times the workflow task has been attempted. */
    readonly attempt: number,
    /** The update id of a change that was sent and now waits on the broken session. */
    readonly pendingUpdateId?: string,
  ) {
    super(
      'session-broken',
      `session "${sessionId}" is broken: its workflow task fails (attempt ${attempt})` +
        `${failure !== undefined ? `: ${failure}` : ''}. Temporal is reachable; this session cannot answer until the cause is fixed. ` +
        `See why with \`agent-sessions history ${sessionId}\` (the WorkflowTaskFailed event) or in the Temporal Web UI.` +
        pending(pendingUpdateId),
    );
  }
}

/** Thrown when a session exists but no worker polls its task queue, so nobody can answer. */
export class NoWorkerError extends AgentSessionsError {
  override readonly name = 'NoWorkerError';
  constructor(
    readonly sessionId: string,
    readonly taskQueue: string,
    /** The update id of a change that was sent and now waits for a worker. */
    readonly pendingUpdateId?: string,
  ) {
    super(
      'no-worker',
      `session "${sessionId}" cannot answer: no worker polls its task queue "${taskQueue}". ` +
        `Start one: agent-sessions worker --allow-parallel-in-progress <true|false> (with AGENT_SESSIONS_TASK_QUEUE=${taskQueue}).` +
        pending(pendingUpdateId),
    );
  }
}

/** Thrown when a worker polls the session's task queue but the session did not answer in time. */
export class SessionTimeoutError extends AgentSessionsError {
  override readonly name = 'SessionTimeoutError';
  constructor(readonly sessionId: string) {
    super(
      'session-timeout',
      `session "${sessionId}" did not answer in time although a worker polls its task queue; the worker may be overloaded. Try again shortly.`,
    );
  }
}

function pending(updateId: string | undefined): string {
  return updateId === undefined
    ? ''
    : ` The change was delivered and waits: it may still be applied. Send it again with the same update id (${updateId}) to apply it at most once and learn its result.`;
}

/** Thrown when Temporal itself cannot be reached or did not answer in time. */
export class TemporalUnavailableError extends AgentSessionsError {
  override readonly name = 'TemporalUnavailableError';
  constructor(
    /** `host:port` the client talks to. */
    readonly address: string,
    readonly namespace: string,
    cause: unknown,
  ) {
    super(
      'temporal-unavailable',
      `cannot reach Temporal at ${address} (namespace ${namespace}): ${firstLine(cause)}. ` +
        'Is a server running? Start one with `agent-sessions dev` or set TEMPORAL_ADDRESS.',
      { cause },
    );
  }
}

/**
 * Thrown when a change (a write, a spawn, a close) was sent but no answer came in time. It may
 * have been applied. Sending it again with the same `updateId` is safe: it is applied at most
 * once, and the answer says what happened.
 */
export class OutcomeUnknownError extends AgentSessionsError {
  override readonly name = 'OutcomeUnknownError';
  constructor(
    readonly sessionId: string,
    /** The update id to retry with, when the change had one. */
    readonly updateId: string | undefined,
    /** How long it waited, when the caller set the limit. */
    readonly waitedMs?: number,
  ) {
    super(
      'outcome-unknown',
      `no answer from session "${sessionId}"${waitedMs !== undefined ? ` within ${waitedMs} ms` : ' in time'}: the change may or may not have been applied` +
        (updateId !== undefined ? `; send it again with the same update id (${updateId}) to apply it at most once and learn its result` : ''),
    );
  }
}

/** Thrown when a history does not replay cleanly; the message names the event or the rule. */
export class ReplayFailedError extends AgentSessionsError {
  override readonly name = 'ReplayFailedError';
  constructor(message: string) {
    super('replay-failed', message);
  }
}

/** Thrown when a setting (flag, environment variable, option) is missing or malformed. */
export class InvalidSettingError extends AgentSessionsError {
  override readonly name: string = 'InvalidSettingError';
  constructor(message: string) {
    super('invalid-setting', message);
  }
}

/** Thrown when input given to a command or an endpoint is malformed. */
export class InvalidInputError extends AgentSessionsError {
  override readonly name = 'InvalidInputError';
  constructor(message: string) {
    super('invalid-input', message);
  }
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!.slice(0, 300);
}
