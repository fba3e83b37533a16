import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  defaultGrpcRetryOptions,
  makeGrpcRetryInterceptor,
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { connectionOptions, resolveTemporalConfig, temporalConfigFromEnv, type TemporalConfig } from '../config/temporal-config';
import { historyToJson, type ExportedHistory, type HistoryJson } from '../history/session-history';
import {
  acceptTodoWrite,
  jsonUtf8Length,
  TodoRejection,
  trimTodoWriteArgs,
  type RejectionProblem,
  type RejectionRule,
  type SessionSnapshot,
  type SubagentSpawnInput,
  type TodoCounts,
  type TodoList,
  type TodoPolicy,
  type TodoWriteArgs,
  type TodoWriteResult,
} from '../todo';
import type * as ReplayModule from '../worker/replay';
import type { ReplayReport } from '../worker/replay';
import {
  closeUpdate,
  SESSION_WORKFLOW_TYPE,
  sessionQuery,
  subagentSpawnUpdate,
  todosQuery,
  todoWriteUpdate,
  turnEndSignal,
  turnStartSignal,
  type AgentSessionInput,
  type SubagentSpawnResult,
} from '../../workflows/messages';
import { MissingSessionIdError, SessionClosedError, SessionNotFoundError, TodoRejectedError } from './errors';
import { withBusyRetry } from './transient-errors';

/** What `start` did. */
export interface StartResult {
  sessionId: string;
  runId: string;
  /** `false` when the session was already running and was left as it is. */
  created: boolean;
}

/** Options of a single write. None of them is part of the model's tool arguments. */
export interface TodoWriteOptions {
  /**
   * The write's idempotency key (Temporal's update id; generated when absent). A write retried
   * with the same id is applied once and answers the first call's result, across worker
   * restarts and continue-as-new.
   */
  updateId?: string;
  /** Refuse the write unless the session is still at this version. */
  expectedVersion?: number;
}

/** One session of a tree, with its subagents below it. */
export interface SessionTree {
  id: string;
  todos: TodoList;
  counts: TodoCounts;
  closed: boolean;
  /** The name its parent gave it; `null` at the root. */
  name: string | null;
  children: SessionTree[];
}

/** One line of `list()`. */
export interface SessionListing {
  id: string;
  status: 'running' | 'closed';
  /** The parent session id, for a subagent (`null` also when the session could not answer). */
  parent: string | null;
  /** `null` when a running session could not answer (no worker on its task queue). */
  counts: TodoCounts | null;
  version: number | null;
  /** When the session last changed (ISO 8601), else when it started. */
  updatedAt: string;
}

/** Settings of a client beyond the connection. */
export interface SessionClientOptions {
  /** Task queue new sessions are started on. */
  taskQueue?: string;
  /** Applied events per run before a session continues as new (default: the workflow's 500). */
  continueAsNewAfter?: number;
}

/**
 * A typed client for agent sessions over `@temporalio/client`: what the CLI uses, and what any
 * Node program can use to drive and read sessions.
 *
 * @example
 * const sessions = await SessionClient.connect();
 * await sessions.todoWrite('build-42', { todos: [{ content: 'Run lint', status: 'in_progress' }] });
 * console.log(await sessions.todos('build-42'));
 * await sessions.closeConnection();
 */
export class SessionClient {
  /** Opens a connection from explicit settings, each missing one read from the environment. */
  static async connect(temporal: Partial<TemporalConfig> & SessionClientOptions = {}): Promise<SessionClient> {
    const { continueAsNewAfter, ...rest } = temporal;
    const config: TemporalConfig = resolveTemporalConfig(rest);
    const connection = await Connection.connect(connectionOptions(config));
    return new SessionClient(
      new Client({ connection, namespace: config.namespace }),
      { taskQueue: config.taskQueue, ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}) },
      true,
    );
  }

  /**
   * Like {@link connect}, but connects on first use and reconnects by itself: for long-running
   * services that must start (and answer "unavailable") while Temporal is down.
   */
  static lazy(temporal: Partial<TemporalConfig> & SessionClientOptions = {}): SessionClient {
    const { continueAsNewAfter, ...rest } = temporal;
    const config: TemporalConfig = resolveTemporalConfig(rest);
    const connection = Connection.lazy({
      ...connectionOptions(config),
      // A service must say "unavailable" in well under a second, not after the SDK's ten
      // retries over ~15 s; busy answers are still retried above, by withBusyRetry.
      interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 3, maxIntervalMs: () => 300 }))],
    });
    return new SessionClient(
      new Client({ connection, namespace: config.namespace }),
      { taskQueue: config.taskQueue, ...(continueAsNewAfter !== undefined ? { continueAsNewAfter } : {}) },
      true,
    );
  }

  /** Task queue new sessions are started on. */
  readonly taskQueue: string;
  private readonly startInput: AgentSessionInput;

  constructor(
    /** The Temporal client underneath, for anything this class does not wrap. */
    readonly temporal: Client,
    options: SessionClientOptions = {},
    private readonly ownsConnection = false,
  ) {
    this.taskQueue = options.taskQueue ?? temporalConfigFromEnv().taskQueue;
    const fromEnv = Number(process.env.AGENT_SESSIONS_CONTINUE_AS_NEW_AFTER);
    const limit = options.continueAsNewAfter ?? (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : undefined);
    this.startInput = limit !== undefined ? { continueAsNewAfter: limit } : {};
  }

  /**
   * Starts a session (workflow id = session id). Idempotent: starting a running session
   * returns it unchanged.
   *
   * @throws SessionClosedError when a session with that id existed and was closed: ids are
   *   not reused, so its history stays what it was.
   */
  async start(sessionId: string, input: Pick<AgentSessionInput, 'task'> = {}): Promise<StartResult> {
    requireId(sessionId);
    try {
      const handle = await this.temporal.workflow.start(SESSION_WORKFLOW_TYPE, {
        ...this.startOptions(sessionId, { ...this.startInput, ...input }),
        workflowIdConflictPolicy: 'FAIL',
      });
      return { sessionId, runId: handle.firstExecutionRunId, created: true };
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
    const described = await this.temporal.workflow.getHandle(sessionId).describe();
    if (described.status.name !== 'RUNNING' && described.status.name !== 'CONTINUED_AS_NEW') throw new SessionClosedError(sessionId);
    return { sessionId, runId: described.runId, created: false };
  }

  /**
   * Sends `todo_write` with tool arguments `{ todos: [...] }` (content is trimmed first) and
   * returns the counts and the confirmation line. The first write to a session that does not
   * exist yet creates it (update-with-start), so an agent's first tool call needs no `start`.
   *
   * @throws TodoRejectedError when the list breaks a rule (nothing reaches history);
   *   SessionClosedError when the session was closed; MissingSessionIdError without an id.
   */
  async todoWrite(sessionId: string, args: TodoWriteArgs | unknown, options: TodoWriteOptions = {}): Promise<TodoWriteResult> {
    requireId(sessionId);
    const updateId = options.updateId ?? randomUUID();
    const trimmed = trimTodoWriteArgs(args);
    refuseUnsendable(trimmed);
    const updateArgs: [TodoWriteArgs, { expectedVersion?: number }?] = [trimmed as TodoWriteArgs];
    if (options.expectedVersion !== undefined) updateArgs.push({ expectedVersion: options.expectedVersion });
    // Temporal admits 10 updates in flight per workflow; past that it answers "resource
    // exhausted". Retrying with the same update id is safe (applied at most once), so a burst of
    // writers queues here with backoff instead of seeing that error.
    return this.guard(sessionId, () =>
      withBusyRetry(
        () =>
          this.temporal.workflow.executeUpdateWithStart(todoWriteUpdate, {
            args: updateArgs,
            updateId,
            startWorkflowOperation: new WithStartWorkflowOperation(SESSION_WORKFLOW_TYPE, {
              ...this.startOptions(sessionId, this.startInput),
              workflowIdConflictPolicy: 'USE_EXISTING',
            }),
          }),
        20,
      ),
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

  /**
   * Starts a subagent of `parentId` as a child session named `name` (unique within the parent)
   * and returns its session id, `<parent>/<name>`.
   *
   * @throws TodoRejectedError (`subagent-name`, `subagent-exists`) for a bad or taken name.
   */
  async spawnSubagent(parentId: string, input: SubagentSpawnInput): Promise<SubagentSpawnResult> {
    return this.call(parentId, (handle) => handle.executeUpdate(subagentSpawnUpdate, { args: [input] }));
  }

  /** The current list, or `null` when the current turn has none. Works on closed sessions. */
  async todos(sessionId: string): Promise<TodoList> {
    return this.call(sessionId, (handle) => withBusyRetry(() => handle.query(todosQuery)), true);
  }

  /** Turn, list, counts, version, parent and children of the session. Works on closed sessions. */
  async session(sessionId: string): Promise<SessionSnapshot> {
    return this.call(sessionId, (handle) => withBusyRetry(() => handle.query(sessionQuery)), true);
  }

  /** The session, its list and counts, and its subagents recursively. */
  async tree(sessionId: string): Promise<SessionTree> {
    const grow = async (snapshot: SessionSnapshot, name: string | null): Promise<SessionTree> => ({
      id: snapshot.sessionId,
      todos: snapshot.todos,
      counts: snapshot.counts,
      closed: snapshot.closed,
      name,
      children: await Promise.all(
        snapshot.children.map(async (child) => grow(await this.session(child.sessionId), child.name)),
      ),
    });
    return grow(await this.session(sessionId), null);
  }

  /**
   * The sessions of this client's task queue known to Temporal's visibility store, newest
   * first; with `open`, only running ones. A running session's counts come from its `session`
   * query; a closed one's from its result, which needs no worker. A running session that cannot
   * answer (no worker polls its task queue) is listed with `counts: null`.
   */
  async list(options: { open?: boolean; limit?: number } = {}): Promise<SessionListing[]> {
    const query = [
      `WorkflowType = '${SESSION_WORKFLOW_TYPE}'`,
      `TaskQueue = '${this.taskQueue.replace(/'/g, "\\'")}'`,
      options.open === true ? `ExecutionStatus = 'Running'` : `ExecutionStatus != 'ContinuedAsNew'`,
    ].join(' AND ');
    const found: Array<{ id: string; running: boolean; started: Date }> = [];
    for await (const execution of this.temporal.workflow.list({ query })) {
      found.push({ id: execution.workflowId, running: execution.status.name === 'RUNNING', started: execution.startTime });
      if (options.limit !== undefined && found.length >= options.limit) break;
    }
    return Promise.all(
      found.map(async ({ id, running, started }): Promise<SessionListing> => {
        const snapshot: SessionSnapshot | undefined = await (running
          ? this.session(id)
          : (this.temporal.workflow.getHandle(id).result() as Promise<SessionSnapshot>)
        ).catch(() => undefined);
        return {
          id,
          status: running ? 'running' : 'closed',
          parent: snapshot?.parent?.sessionId ?? null,
          counts: snapshot?.counts ?? null,
          version: snapshot?.version ?? null,
          updatedAt: snapshot?.updatedAt ?? started.toISOString(),
        };
      }),
    );
  }

  /** Closes the session and, first, its open subagents; queries keep answering. Idempotent. */
  async close(sessionId: string): Promise<SessionSnapshot> {
    try {
      return await this.call(sessionId, (handle) => handle.executeUpdate(closeUpdate, { args: [{}] }));
    } catch (error) {
      if (error instanceof SessionClosedError) return this.session(sessionId);
      throw error;
    }
  }

  /**
   * The session's whole history. A session with one run exports exactly what
   * `temporal workflow show --output json` prints (`{ "events": [...] }`); one that continued as
   * new exports `{ "sessionId", "runs": [{ "runId", "events" }, ...] }`, oldest run first.
   */
  async exportHistory(sessionId: string): Promise<ExportedHistory> {
    const runs: Array<{ runId: string; events: unknown[] }> = [];
    let runId: string | undefined;
    for (;;) {
      const handle = this.temporal.workflow.getHandle(sessionId, runId);
      const history = await this.call(sessionId, () => handle.fetchHistory(), true);
      const json: HistoryJson = historyToJson(history);
      const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
      runs.unshift({ runId: runId ?? (await handle.describe()).runId, events: json.events });
      const previous = started?.continuedExecutionRunId;
      if (!previous) break;
      runId = previous;
    }
    if (runs.length === 1) return { events: runs[0]!.events };
    return { sessionId, runs };
  }

  /**
   * Replays a session's history (fetched by id, or given) against the current workflow code
   * bundled under `policy`; resolves with the final state when it replays cleanly.
   *
   * @throws ReplayFailedError naming the broken rule or event.
   */
  async replay(source: string | ExportedHistory, policy: TodoPolicy): Promise<ReplayReport> {
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

  private startOptions(sessionId: string, input: AgentSessionInput) {
    return {
      workflowId: sessionId,
      taskQueue: this.taskQueue,
      args: [input] as [AgentSessionInput],
      // Ids are never reused: a closed session's history stays the whole story of that id.
      workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    };
  }

  private async call<T>(sessionId: string, action: (handle: WorkflowHandle) => Promise<T>, readOnly = false): Promise<T> {
    return this.guard(sessionId, () => action(this.temporal.workflow.getHandle(sessionId)), readOnly);
  }

  private async guard<T>(sessionId: string, action: () => Promise<T>, readOnly = false): Promise<T> {
    requireId(sessionId);
    try {
      return await action();
    } catch (error) {
      throw translateError(sessionId, error, readOnly);
    }
  }
}

/** Above this many bytes of JSON, arguments are checked here: Temporal would refuse the payload itself. */
const LARGEST_SENT_ARGUMENTS = 1024 * 1024;

/**
 * Arguments that cannot reach the validator — not encodable as JSON (say, nested ten thousand
 * deep), or larger than Temporal's payload limit — are refused here with the rule they break,
 * instead of surfacing as a payload or gRPC error.
 *
 * @throws TodoRejectedError
 */
function refuseUnsendable(args: unknown): void {
  let bytes: number | undefined;
  try {
    bytes = jsonUtf8Length(args);
  } catch {
    bytes = undefined; // Not encodable as JSON at all (nested too deep for the encoder).
  }
  if (bytes !== undefined && bytes <= LARGEST_SENT_ARGUMENTS) return;
  try {
    // The policy-free rules, the same the validator runs: such arguments break one of them
    // (shape, count or size), and the model gets the very sentence the workflow would give.
    acceptTodoWrite(args, { allowParallelInProgress: true });
  } catch (error) {
    if (error instanceof TodoRejection) throw new TodoRejectedError(error.message, error.rule, error.problems);
    throw error;
  }
  const detail =
    bytes === undefined
      ? 'the arguments cannot be encoded as JSON; send a plain {"todos": [...]}'
      : `the arguments are ${bytes} bytes of JSON, more than the ${LARGEST_SENT_ARGUMENTS} a write can carry`;
  const rule = bytes === undefined ? ('shape' as const) : ('list-too-large' as const);
  throw new TodoRejectedError(`todo_write rejected: ${detail} [${rule}]`, rule, [{ rule, path: 'arguments', detail }]);
}

function translateError(sessionId: string, error: unknown, readOnly: boolean): unknown {
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const failure = error.cause;
    if (failure.type === 'TodoRejected') {
      const detail = (failure.details?.[0] ?? {}) as { rule?: RejectionRule; problems?: RejectionProblem[] };
      if (detail.rule === 'session-closed' && !/subagent/.test(failure.message)) return new SessionClosedError(sessionId);
      return new TodoRejectedError(failure.message, detail.rule ?? 'shape', detail.problems ?? []);
    }
  }
  if (error instanceof WorkflowExecutionAlreadyStartedError) return new SessionClosedError(sessionId);
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
