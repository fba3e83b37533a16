import {
  Client,
  Connection,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { connectionOptions, temporalConfigFromEnv, type TemporalConfig } from '../config/temporal-config';
import { historyToJson, type HistoryJson } from '../history/session-history';
import {
  trimTodoWriteArgs,
  type RejectionProblem,
  type RejectionRule,
  type SessionSnapshot,
  type TodoList,
  type TodoPolicy,
  type TodoWriteArgs,
} from '../todo';
import type * as ReplayModule from '../worker/replay';
import type { ReplayReport } from '../worker/replay';
import {
  closeUpdate,
  SESSION_WORKFLOW_TYPE,
  sessionQuery,
  todosQuery,
  todoWriteUpdate,
  turnEndSignal,
  turnStartSignal,
  type AgentSessionInput,
  type TodoWriteResult,
} from '../../workflows/messages';
import { MissingSessionIdError, SessionClosedError, SessionNotFoundError, TodoRejectedError } from './errors';

/** What `start` did. */
export interface StartResult {
  sessionId: string;
  runId: string;
  /** `false` when the session was already running and was left as it is. */
  created: boolean;
}

/** Options of a single write. */
export interface TodoWriteOptions {
  /** Temporal update id; the server applies a repeated id once within a run. */
  updateId?: string;
}

/**
 * A typed client for agent sessions over `@temporalio/client`: what the CLI uses, and what any
 * Node program can use to drive and read sessions.
 *
 * @example
 * const sessions = await SessionClient.connect();
 * await sessions.start('build-42');
 * await sessions.todoWrite('build-42', { todos: [{ content: 'Run lint', status: 'in_progress' }] });
 * console.log(await sessions.todos('build-42'));
 * await sessions.closeConnection();
 */
export class SessionClient {
  /** Opens a connection from explicit settings, each missing one read from the environment. */
  static async connect(temporal: Partial<TemporalConfig> = {}): Promise<SessionClient> {
    const config: TemporalConfig = { ...temporalConfigFromEnv(), ...definedOnly(temporal) };
    const connection = await Connection.connect(connectionOptions(config));
    return new SessionClient(new Client({ connection, namespace: config.namespace }), config.taskQueue, true);
  }

  constructor(
    /** The Temporal client underneath, for anything this class does not wrap. */
    readonly temporal: Client,
    /** Task queue new sessions are started on. */
    readonly taskQueue: string = temporalConfigFromEnv().taskQueue,
    private readonly ownsConnection = false,
  ) {}

  /**
   * Starts a session (workflow id = session id). Idempotent: starting a running session
   * returns it unchanged.
   *
   * @throws SessionClosedError when a session with that id existed and was closed: ids are
   *   not reused, so its history stays what it was.
   */
  async start(sessionId: string, input: AgentSessionInput = {}): Promise<StartResult> {
    requireId(sessionId);
    try {
      const handle = await this.temporal.workflow.start(SESSION_WORKFLOW_TYPE, {
        workflowId: sessionId,
        taskQueue: this.taskQueue,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        // Ids are never reused: a closed session's history stays the whole story of that id.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      return { sessionId, runId: handle.firstExecutionRunId, created: true };
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    const described = await this.temporal.workflow.getHandle(sessionId).describe();
    if (described.status.name !== 'RUNNING') throw new SessionClosedError(sessionId);
    return { sessionId, runId: described.runId, created: false };
  }

  /**
   * Sends `todo_write` with tool arguments `{ todos: [...] }` (content is trimmed first) and
   * returns the counts and the confirmation line.
   *
   * @throws TodoRejectedError when the list breaks a rule (nothing reaches history);
   *   SessionNotFoundError / SessionClosedError when there is no open session to own it.
   */
  async todoWrite(sessionId: string, args: TodoWriteArgs | unknown, options: TodoWriteOptions = {}): Promise<TodoWriteResult> {
    requireId(sessionId);
    return this.call(sessionId, (handle) =>
      handle.executeUpdate(todoWriteUpdate, {
        args: [trimTodoWriteArgs(args) as TodoWriteArgs],
        ...(options.updateId !== undefined ? { updateId: options.updateId } : {}),
      }),
    );
  }

  /** Starts a new turn; the session's list becomes `null` until the next write. */
  async turnStart(sessionId: string): Promise<void> {
    await this.call(sessionId, (handle) => handle.signal(turnStartSignal, {}));
  }

  /** Ends the current turn; the list stays visible. */
  async turnEnd(sessionId: string): Promise<void> {
    await this.call(sessionId, (handle) => handle.signal(turnEndSignal, {}));
  }

  /** The current list, or `null` when the current turn has none. Works on closed sessions. */
  async todos(sessionId: string): Promise<TodoList> {
    return this.call(sessionId, (handle) => handle.query(todosQuery), true);
  }

  /** Turn, list, counts and version of the session. Works on closed sessions. */
  async session(sessionId: string): Promise<SessionSnapshot> {
    return this.call(sessionId, (handle) => handle.query(sessionQuery), true);
  }

  /** Closes the session: its workflow completes, queries keep answering. Idempotent. */
  async close(sessionId: string): Promise<SessionSnapshot> {
    try {
      return await this.call(sessionId, (handle) => handle.executeUpdate(closeUpdate, { args: [{}] }));
    } catch (error) {
      if (error instanceof SessionClosedError) return this.session(sessionId);
      throw error;
    }
  }

  /** The session's whole history in the JSON form `temporal workflow show --output json` prints. */
  async exportHistory(sessionId: string): Promise<HistoryJson> {
    const history = await this.call(sessionId, (handle) => handle.fetchHistory(), true);
    return historyToJson(history);
  }

  /**
   * Replays a session's history (fetched by id, or given) against the current workflow code
   * bundled under `policy`; resolves with the final state when it replays cleanly.
   *
   * @throws ReplayFailedError naming the broken rule or event.
   */
  async replay(source: string | HistoryJson, policy: TodoPolicy): Promise<ReplayReport> {
    const history = typeof source === 'string' ? await this.exportHistory(source) : source;
    // Loaded on demand: replay needs the worker package, plain clients do not.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { replaySessionHistory } = require('../worker/replay') as typeof ReplayModule;
    return replaySessionHistory(history, policy, typeof source === 'string' ? source : undefined);
  }

  /** Closes the connection if this client opened it. */
  async closeConnection(): Promise<void> {
    if (this.ownsConnection) await this.temporal.connection.close();
  }

  private async call<T>(sessionId: string, action: (handle: WorkflowHandle) => Promise<T>, readOnly = false): Promise<T> {
    requireId(sessionId);
    const handle = this.temporal.workflow.getHandle(sessionId);
    try {
      return await action(handle);
    } catch (error) {
      throw translateError(sessionId, error, readOnly);
    }
  }
}

function translateError(sessionId: string, error: unknown, readOnly: boolean): unknown {
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const failure = error.cause;
    if (failure.type === 'TodoRejected') {
      const detail = (failure.details?.[0] ?? {}) as { rule?: RejectionRule; problems?: RejectionProblem[] };
      if (detail.rule === 'session-closed') return new SessionClosedError(sessionId);
      return new TodoRejectedError(failure.message, detail.rule ?? 'shape', detail.problems ?? []);
    }
  }
  if (error instanceof WorkflowNotFoundError) {
    // Temporal answers "not found" both for unknown ids and for messages to completed runs.
    if (!readOnly && /completed|closed/i.test(error.message)) return new SessionClosedError(sessionId);
    return new SessionNotFoundError(sessionId);
  }
  return error;
}

function requireId(sessionId: string): void {
  if (typeof sessionId !== 'string' || sessionId.trim() === '') throw new MissingSessionIdError();
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
