import { isBlank, TRIMMED_CHARACTERS } from '../todo/blank-text';
import { describeValue } from '../todo/rejection';
import type { AgentState } from './agent-state';
import { carriedState } from './carried-state';
import { checkForkInput, type SessionFork } from './fork';
import { INITIAL_SESSION_STATE, type SessionState } from './session-state';
import type { SessionParent } from './snapshot';
import { childSessionId, MAX_TASK_LENGTH } from './subagent';

/** Input of a session run. Empty for a fresh top-level session. */
export interface SessionInput {
  /** Set for a subagent: the session that spawned it and the name it gave it. */
  parent?: SessionParent;
  /** What the session was asked to do. */
  task?: string;
  /**
   * Applied events after which the run continues as new (it also does when Temporal suggests
   * it). Part of the workflow input, hence of history, so replay takes the same decisions.
   */
  continueAsNewAfter?: number;
  /** The state carried from the previous run; accepted only in a run that continued from one. */
  carried?: SessionState;
  /** The agent loop's state carried from the previous run (see {@link carried}). */
  carriedAgent?: AgentState;
  /** Run the agent loop with `task` as the first message, then close (a subagent spawned by a model). */
  agent?: boolean;
  /**
   * Set for a fork of another session: where it was forked from and the subagents the source had
   * open there; the first run also carries the state it starts from (see {@link SessionFork}).
   */
  fork?: SessionFork;
}

/**
 * The range `continueAsNewAfter` must fall in. Below it a session would spend its life
 * continuing as new; above it a run would pass Temporal's 2,000 accepted updates per run.
 */
export const CONTINUE_AS_NEW_AFTER_RANGE = Object.freeze({ min: 10, max: 2000 });

/** What Temporal itself says about the run being started: facts no starter can choose. */
export interface RunFacts {
  /** The workflow id, which is the session id. */
  workflowId: string;
  /** The workflow id of the parent workflow that started this one as a child, if any. */
  parentWorkflowId: string | undefined;
  /** The run this one continued from, if it was started by continue-as-new. */
  continuedFromRunId: string | undefined;
}

/** The separator between a parent's id and a subagent's name in a child's session id. */
export const SESSION_ID_SEPARATOR = '/';

/**
 * The character Temporal's visibility cannot search for: a listing filtered on a value that holds
 * it never answers (the dev server's SQLite). A new session's id may not hold it (its subagents
 * could never be listed), nor may a listing's filter.
 */
export const UNSEARCHABLE_CHARACTER = '\u0000';

/** {@link UNSEARCHABLE_CHARACTER} as a regular expression writes it (ECMAScript and Python alike). */
const UNSEARCHABLE = `\\u${UNSEARCHABLE_CHARACTER.charCodeAt(0).toString(16).padStart(4, '0')}`;

/**
 * What {@link newSessionIdProblem} accepts, as a JSON Schema `pattern` (ECMAScript and Python read
 * it alike): not blank, without {@link SESSION_ID_SEPARATOR} or {@link UNSEARCHABLE_CHARACTER}.
 * The HTTP API's document states it.
 */
export const NEW_SESSION_ID_PATTERN = `^[^${SESSION_ID_SEPARATOR}${UNSEARCHABLE}]*[^${SESSION_ID_SEPARATOR}${UNSEARCHABLE}${TRIMMED_CHARACTERS}][^${SESSION_ID_SEPARATOR}${UNSEARCHABLE}]*$`;

/** A value a listing can be filtered on, as a JSON Schema `pattern`: without {@link UNSEARCHABLE_CHARACTER}. */
export const SEARCHABLE_PATTERN = `^[^${UNSEARCHABLE}]*$`;

/** Thrown when a session run's input cannot be served; the message names the setting. */
export class SessionInputRejection extends Error {
  override readonly name = 'SessionInputRejection';
}

/**
 * Checks a session id a client wants to start a top-level session with. `/` separates a parent
 * from its subagents (`build-42/tests`), so a top-level id holding one could take the id of a
 * subagent before its parent spawns it.
 *
 * @returns why the id cannot be used, or `undefined` when it can.
 */
export function topLevelIdProblem(sessionId: string): string | undefined {
  if (isBlank(sessionId)) return 'it is empty';
  if (sessionId.includes(SESSION_ID_SEPARATOR)) {
    return `"${SESSION_ID_SEPARATOR}" separates a parent session from its subagents (<parent>/<name>); a top-level session id cannot contain it, and subagents are started with spawn`;
  }
  return undefined;
}

/**
 * Checks the id of a top-level session that a client may be about to create: what
 * {@link topLevelIdProblem} checks, and no {@link UNSEARCHABLE_CHARACTER}. Only clients ask it,
 * never a replay: a session made before the rule existed keeps replaying.
 *
 * @returns why the id cannot be used, or `undefined` when it can.
 */
export function newSessionIdProblem(sessionId: string): string | undefined {
  const problem = topLevelIdProblem(sessionId);
  if (problem !== undefined) return problem;
  if (sessionId.includes(UNSEARCHABLE_CHARACTER)) return "it holds U+0000, which Temporal's visibility cannot search for: its subagents could never be listed";
  return undefined;
}

/**
 * Checks the input of a session run against what Temporal says about the run. Anyone who can
 * start a workflow can send any input, so nothing in it is trusted:
 * - `continueAsNewAfter` must be an integer in {@link CONTINUE_AS_NEW_AFTER_RANGE};
 * - `carried` is accepted only in a run that continued from an earlier run (continue-as-new
 *   keeps the workflow id, so that earlier run was the same session's);
 * - `parent` must be the workflow that really started this one as a child, and the session id
 *   must be `<parent>/<name>`; a session without a parent must have an id without `/`;
 * - `task` is at most {@link MAX_TASK_LENGTH} characters;
 * - `fork` only on a top-level session that runs no subagent task (see {@link checkForkInput}):
 *   its first run carries the state it starts from, checked as carried state is, and no
 *   `carried`; nothing else may be present.
 *
 * These rules run again whenever a history is replayed, so they are part of the durable
 * contract: never narrow them in a later release (a history they once admitted must replay).
 *
 * @throws SessionInputRejection naming the setting and what it allows.
 */
export function checkSessionInput(input: unknown, run: RunFacts): SessionInput {
  const refuse = (detail: string): never => {
    throw new SessionInputRejection(`session ${JSON.stringify(run.workflowId)} cannot start: ${detail}`);
  };
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) return refuse(`its input must be an object, got ${describeValue(input)}`);
  const { parent, task, continueAsNewAfter, carried, carriedAgent, agent, fork, ...extra } = input as Record<string, unknown>;
  const unknown = Object.keys(extra);
  if (unknown.length > 0) {
    refuse(`its input has unknown propert${unknown.length === 1 ? 'y' : 'ies'} ${unknown.slice(0, 5).map((k) => describeValue(k)).join(', ')}; allowed: parent, task, continueAsNewAfter, carried, carriedAgent, agent, fork`);
  }
  const checked: SessionInput = {};

  if (continueAsNewAfter !== undefined) {
    const { min, max } = CONTINUE_AS_NEW_AFTER_RANGE;
    if (typeof continueAsNewAfter !== 'number' || !Number.isInteger(continueAsNewAfter) || continueAsNewAfter < min || continueAsNewAfter > max) {
      refuse(`continueAsNewAfter must be an integer from ${min} to ${max} (applied events per run), got ${describeValue(continueAsNewAfter)}`);
    }
    checked.continueAsNewAfter = continueAsNewAfter as number;
  }

  if (task !== undefined) {
    if (typeof task !== 'string' || task.length > MAX_TASK_LENGTH) refuse(`task must be a string of at most ${MAX_TASK_LENGTH} characters, got ${describeValue(task)}`);
    checked.task = task as string;
  }

  const continued = run.continuedFromRunId !== undefined;
  if (parent !== undefined) {
    const p = parent as Record<string, unknown> | null;
    if (typeof p !== 'object' || p === null || typeof p.sessionId !== 'string' || typeof p.name !== 'string' || Object.keys(p).length !== 2) {
      return refuse(`parent must be {"sessionId", "name"}, got ${describeValue(parent)}`);
    }
    // A continued run's input was written by the run before it, which made this check.
    if (!continued && run.parentWorkflowId !== p.sessionId) {
      refuse(
        `parent names ${describeValue(p.sessionId)}, but ${run.parentWorkflowId === undefined ? 'no workflow' : `workflow ${describeValue(run.parentWorkflowId)}`} started it as a child; subagents are started by their parent's subagent/spawn`,
      );
    }
    if (run.workflowId !== childSessionId(p.sessionId as string, p.name as string)) {
      refuse(`a subagent's session id must be <parent>/<name> (${describeValue(childSessionId(p.sessionId as string, p.name as string))})`);
    }
    checked.parent = { sessionId: p.sessionId as string, name: p.name as string };
  } else {
    const problem = topLevelIdProblem(run.workflowId);
    if (problem !== undefined) refuse(problem);
  }

  if (carried !== undefined || carriedAgent !== undefined) {
    if (!continued) {
      refuse('carried state is accepted only in a run that continued from an earlier run of the same session (continue-as-new), never on a fresh start');
    }
    if (carried !== undefined) checked.carried = carried as SessionState;
    if (carriedAgent !== undefined) checked.carriedAgent = carriedAgent as AgentState;
  }

  if (agent !== undefined) {
    if (typeof agent !== 'boolean') refuse(`agent must be true or false, got ${describeValue(agent)}`);
    if (agent === true && (typeof task !== 'string' || task.trim() === '')) refuse('agent: true needs a task: the first message of its agent loop');
    if (agent === true) checked.agent = true;
  }

  if (fork !== undefined) {
    if (checked.parent !== undefined || checked.agent === true) refuse('a fork is a top-level session: its input cannot also name a parent or run a subagent task (agent: true)');
    checked.fork = checkForkInput(fork, continued, (detail) => refuse(detail));
  }
  return checked;
}

/**
 * The state a run starts from, once its input passed {@link checkSessionInput} and the carried
 * checks: the state carried from the previous run, else the state a fork's first run was given,
 * else the initial state. The workflow and the offline fold both start here.
 */
export function runStartState(input: SessionInput): SessionState {
  if (input.carried !== undefined) return carriedState(input.carried);
  if (input.fork?.state !== undefined) return carriedState(input.fork.state);
  return INITIAL_SESSION_STATE;
}

/** The agent state a run starts from (see {@link runStartState}); `undefined` for a loop that starts empty. */
export function runStartAgent(input: SessionInput): AgentState | undefined {
  return input.carriedAgent ?? input.fork?.agent;
}
