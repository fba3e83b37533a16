import { randomUUID } from 'node:crypto';
import {
  Client,
  Connection,
  type ClientPlugin,
  WithStartWorkflowOperation,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowExecutionAlreadyStartedError, type QueryDefinition, type UpdateDefinition } from '@temporalio/common';
import { temporal as proto } from '@temporalio/proto';
import { connectionOptions, resolveTemporalConfig, TEMPORAL_DEFAULTS, type TemporalConfig } from '../config/temporal-config';
import { exportSessionHistory, fetchSessionRuns, type SessionRun } from '../history/export-history';
import { resolveForkPoint, type ForkAt } from './fork-point';
import { connectionInterceptors } from './closed-connection';
import { BoundedMap } from './bounded-map';
import { ClosedTreeNodes, type TreeNodeSource } from './closed-tree-nodes';
import { listChildren, listSessions, type ListOptions, type SessionListing, type SessionPage } from './session-listing';
import { readTree, type SessionTree, type TreeOptions } from './session-tree';
import { runInputOf, type ExportedHistory } from '../history/session-history';
// The tool's modules one by one: its index also loads the schema library, which a client that
// only writes and reads does not need.
import { acceptTodoWrite, trimTodoWriteArgs } from '../todo/acceptance';
import { Rejection, type RejectionProblem, type RejectionRule } from '../todo/rejection';
import type { TodoWriteArgs } from '../todo/schema';
import type { TodoList } from '../todo/todo-item';
import { jsonUtf8Length } from '../todo/utf8';
import {
  addUsage,
  CONTINUE_AS_NEW_AFTER_RANGE,
  NO_USAGE,
  SESSION_ID_SEPARATOR,
  newSessionIdProblem,
  type ChildSession,
  type ForkOrigin,
  type SessionFork,
  type SessionSnapshot,
  type SubagentSpawnInput,
  type TodoWriteResult,
} from '../session';
// The wire's definitions (updates, queries, signals, the workflow type) as `wire.*` where they are sent.
import * as wire from '../../workflows/messages';
import type { AgentSessionInput, SubagentSpawnResult, ToolDecisionResult, Transcript, TurnOutcome, Usage, UserMessageResult } from '../../workflows/messages';
import type { ToolAcceptResult } from '../session/tool-pins';
import {
  AgentSessionsError,
  InvalidInputError,
  InvalidSessionIdError,
  InvalidSettingError,
  MissingSessionIdError,
  NoWorkerError,
  OutcomeUnknownError,
  RequestRejectedError,
  SessionBrokenError,
  SessionClosedError,
  SessionExistsError,
  SessionNotFoundError,
  SessionTimeoutError,
  SpawnRejectedError,
  TemporalUnavailableError,
  TodoRejectedError,
  ReplayFailedError,
} from './errors';
import { grpcCode, GRPC, isResendableUpdateError, withBusyRetry } from './transient-errors';

/** What `start` did. */
export interface StartResult {
  sessionId: string;
  runId: string;
  /** `false` when the session was already running and was left as it is. */
  created: boolean;
}

/** What `fork` did. */
export interface ForkResult {
  /** The new session's id. */
  sessionId: string;
  runId: string;
  /** The session, run and history event it was forked from. */
  forkedFrom: ForkOrigin;
  /** The subagents the source had open at that event (listed, not copied, not restarted). */
  forkedChildren: ChildSession[];
  /** The new session, as its `session` query answers right after the start. */
  session: SessionSnapshot;
}

/** How long the worker may take to compute a fork point: the first fork on a worker also bundles its replay code. */
const FORK_POINT_TIMEOUT = '6 minutes';

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

/** How many closed subagents' usage a client keeps (a few hundred bytes each). */
const CLOSED_USAGE_KEPT = 10_000;

/** Settings of a client beyond the connection. */
export interface SessionClientOptions {
  /** Task queue new sessions are started on (default `agent-sessions`). */
  taskQueue?: string;
  /**
   * Applied events per run before a session continues as new (default: the workflow's 500),
   * an integer from 10 to 2,000.
   */
  continueAsNewAfter?: number;
  /** The frontend address, for messages (default: the connection's own). */
  address?: string;
  /**
   * How long a query or a write may go unanswered before the client looks at why (a broken
   * session, no worker); default 2,000 ms. A healthy session answers in milliseconds.
   */
  diagnoseAfterMs?: number;
  /**
   * Temporal client plugins (`connect` and `lazy` only): the tracing plugin of
   * `startTracing(…).clientPlugin` makes every start, update and signal part of the active trace.
   */
  plugins?: ClientPlugin[];
}

/**
 * A typed client for agent sessions over `@temporalio/client`: what the CLI uses, and what any
 * Node program can use to drive and read sessions. It reads no environment variable: what is not
 * given takes the documented default ({@link TEMPORAL_DEFAULTS}); a program that wants the CLI's
 * behaviour passes `loadSettings(process.env).temporal`.
 *
 * @example
 * const sessions = await SessionClient.connect({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'agent-sessions' });
 * await sessions.todoWrite('build-42', { todos: [{ content: 'Run lint', status: 'in_progress' }] });
 * console.log(await sessions.todos('build-42'));
 * await sessions.closeConnection();
 */
export class SessionClient {
  /**
   * Opens a connection from explicit settings, each missing one taking its default
   * ({@link TEMPORAL_DEFAULTS}: `127.0.0.1:7233`, namespace `default`, task queue `agent-sessions`).
   *
   * @throws TemporalUnavailableError when Temporal cannot be reached; InvalidSettingError for a
   *   malformed setting.
   */
  static async connect(temporal: Partial<TemporalConfig> & SessionClientOptions = {}): Promise<SessionClient> {
    const { continueAsNewAfter, diagnoseAfterMs, plugins, ...rest } = temporal;
    const config: TemporalConfig = resolveTemporalConfig(rest);
    let connection: Connection;
    try {
      connection = await Connection.connect({ ...connectionOptions(config), interceptors: connectionInterceptors() });
    } catch (error) {
      throw new TemporalUnavailableError(config.address, config.namespace, error);
    }
    return new SessionClient(
      new Client({ connection, namespace: config.namespace, ...(plugins !== undefined ? { plugins } : {}) }),
      { taskQueue: config.taskQueue, address: config.address, ...defined({ continueAsNewAfter, diagnoseAfterMs }) },
      true,
    );
  }

  /**
   * Like {@link connect}, but connects on first use and reconnects by itself: for long-running
   * services that must start (and answer "unavailable") while Temporal is down.
   */
  static lazy(temporal: Partial<TemporalConfig> & SessionClientOptions = {}): SessionClient {
    const { continueAsNewAfter, diagnoseAfterMs, plugins, ...rest } = temporal;
    const config: TemporalConfig = resolveTemporalConfig(rest);
    const connection = Connection.lazy({
      ...connectionOptions(config),
      // A service must say "unavailable" in well under a second, not after the SDK's ten
      // retries over ~15 s; busy answers are still retried above, by withBusyRetry.
      interceptors: connectionInterceptors({ maxAttempts: 3, maxIntervalMs: () => 300 }),
    });
    return new SessionClient(
      new Client({ connection, namespace: config.namespace, ...(plugins !== undefined ? { plugins } : {}) }),
      { taskQueue: config.taskQueue, address: config.address, ...defined({ continueAsNewAfter, diagnoseAfterMs }) },
      true,
    );
  }

  /** Task queue new sessions are started on. */
  readonly taskQueue: string;
  private readonly startInput: AgentSessionInput;
  private readonly address: string;
  private readonly diagnoseAfterMs: number;
  /** What trees show of closed subagents, read once each. */
  private readonly closedTreeNodes = new ClosedTreeNodes();
  /** The usage of closed subagents' subtrees, read once each (see {@link usage}). */
  private readonly closedUsage = new BoundedMap<string, Usage>(CLOSED_USAGE_KEPT);
  /** Calls given up on that may still be retrying (see {@link closeConnection}). */
  private readonly abandoned = new Set<Promise<void>>();

  /**
   * @throws InvalidSettingError when `continueAsNewAfter` is not an integer in the allowed range.
   */
  constructor(
    /** The Temporal client underneath, for anything this class does not wrap. */
    readonly temporal: Client,
    options: SessionClientOptions = {},
    private readonly ownsConnection = false,
  ) {
    this.taskQueue = options.taskQueue ?? TEMPORAL_DEFAULTS.taskQueue;
    this.address = options.address ?? (temporal.connection as Connection).options?.address ?? 'the configured address';
    this.diagnoseAfterMs = options.diagnoseAfterMs ?? 2000;
    const limit = options.continueAsNewAfter;
    if (limit !== undefined) {
      const { min, max } = CONTINUE_AS_NEW_AFTER_RANGE;
      if (!Number.isInteger(limit) || limit < min || limit > max) {
        throw new InvalidSettingError(`continueAsNewAfter must be an integer from ${min} to ${max} (applied events per run), got ${JSON.stringify(limit)}`);
      }
    }
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
    requireTopLevelId(sessionId);
    try {
      const handle = await this.temporal.workflow.start(wire.SESSION_WORKFLOW_TYPE, {
        ...this.startOptions(sessionId, { ...this.startInput, ...input }),
        workflowIdConflictPolicy: 'FAIL',
      });
      return { sessionId, runId: handle.firstExecutionRunId, created: true };
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw this.translate(sessionId, error, 'change');
    }
    const described = await this.guard(sessionId, () => this.temporal.workflow.getHandle(sessionId).describe(), 'read');
    if (described.status.name !== 'RUNNING' && described.status.name !== 'CONTINUED_AS_NEW') throw new SessionClosedError(sessionId);
    return { sessionId, runId: described.runId, created: false };
  }

  /**
   * Starts session `newId` as a fork of `sourceId` at a point of its history (see
   * {@link ForkAt}; the newest event by default): the new session starts with the source's list,
   * turn count, version, transcript and usage as of that event, and `forkedFrom` naming it. The
   * source is never touched; a closed source can be forked. A turn running at that event is
   * ended in the fork, messages waiting for a turn and calls waiting for a person are dropped,
   * and the source's subagents are not copied: those open at that event are listed as
   * `forkedChildren`. The state at the event is computed on the worker side (a `forkPoint`
   * workflow replays the source's history there); everything is checked first, so a refused fork
   * starts nothing.
   *
   * @throws SessionNotFoundError for a missing source; SessionExistsError when `newId` is taken;
   *   InvalidSessionIdError for an id that cannot be a top-level session's; InvalidInputError for
   *   an event id or turn that is not a positive integer; RequestRejectedError (`no-such-run`,
   *   `no-such-event`, `no-such-turn`) naming the value and what the source has; NoWorkerError
   *   when no worker polls the task queue; ReplayFailedError when the source's history does not
   *   replay on the worker's code.
   */
  async fork(sourceId: string, newId: string, at: ForkAt = {}): Promise<ForkResult> {
    requireId(sourceId);
    requireTopLevelId(newId);
    await this.refuseTaken(newId);
    const runs = await this.historyRuns(sourceId).catch((error: unknown) => {
      throw error instanceof SessionNotFoundError ? new SessionNotFoundError(sourceId, 'there is nothing to fork') : error;
    });
    const point = resolveForkPoint(sourceId, runs, at);
    await this.requireWorker(newId);
    const fork = await this.guard(sourceId, () => this.forkPointState(point), 'read');
    const task = runs[0] !== undefined ? firstRunTask(runs[0]) : undefined;
    let runId: string;
    try {
      const handle = await this.temporal.workflow.start(wire.SESSION_WORKFLOW_TYPE, {
        ...this.startOptions(newId, { ...this.startInput, ...(task !== undefined ? { task } : {}), fork }),
        workflowIdConflictPolicy: 'FAIL',
        // The listing reads where a fork came from without asking the session.
        memo: { forkedFrom: fork.from },
      });
      runId = handle.firstExecutionRunId;
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) throw await this.takenError(newId);
      throw this.translate(newId, error, 'change');
    }
    return { sessionId: newId, runId, forkedFrom: fork.from, forkedChildren: fork.children, session: await this.session(newId) };
  }

  /**
   * Every run of a session's continue-as-new chain, oldest first, each with its run id and
   * history (what `exportHistory` returns, with the run ids of a single-run session too).
   */
  async historyRuns(sessionId: string): Promise<SessionRun[]> {
    return this.call(sessionId, () => fetchSessionRuns(this.temporal, sessionId), 'read');
  }

  /** Refuses an id that a session, running or closed, already has. */
  private async refuseTaken(sessionId: string): Promise<void> {
    const taken = await this.temporal.workflow.getHandle(sessionId).describe().then(
      () => true,
      (error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return false;
        throw this.translate(sessionId, error, 'read');
      },
    );
    if (taken) throw await this.takenError(sessionId);
  }

  private async takenError(sessionId: string): Promise<SessionExistsError> {
    const described = await this.temporal.workflow.getHandle(sessionId).describe().catch(() => undefined);
    const status = described?.status.name;
    return new SessionExistsError(sessionId, status === 'RUNNING' || status === 'CONTINUED_AS_NEW');
  }

  /** Refuses to wait for work that no worker would take: nothing polls the task queue. */
  private async requireWorker(sessionId: string): Promise<void> {
    const { pollers } = await this.temporal.connection.workflowService.describeTaskQueue({
      namespace: this.temporal.options.namespace,
      taskQueue: { name: this.taskQueue },
      taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    });
    if ((pollers ?? []).length === 0) throw new NoWorkerError(sessionId, this.taskQueue);
  }

  /** The state a fork at `point` starts from, computed by the `forkPoint` workflow on a worker. */
  private async forkPointState(point: ForkOrigin): Promise<Required<SessionFork>> {
    try {
      return await this.temporal.workflow.execute(wire.FORK_POINT_WORKFLOW_TYPE, {
        taskQueue: this.taskQueue,
        workflowId: `~fork-point-${randomUUID()}`,
        args: [{ sessionId: point.id, runId: point.runId, eventId: point.eventId }],
        workflowExecutionTimeout: FORK_POINT_TIMEOUT,
      });
    } catch (error) {
      const failure = failureOf(error);
      if (failure?.type === 'ForkRefused') throw new InvalidInputError(failure.message);
      if (failure?.type === 'ForkReplayFailed') throw new ReplayFailedError(`fork failed: ${failure.message}`);
      throw error;
    }
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
    return this.updateWithStart(sessionId, wire.todoWriteUpdate, updateArgs, updateId);
  }

  /** Starts a new turn; the session's list becomes `null` until the next write. */
  async turnStart(sessionId: string): Promise<void> {
    await this.call(sessionId, (handle) => handle.signal(wire.turnStartSignal, {}));
  }

  /** Ends the current turn; the list stays visible. */
  async turnEnd(sessionId: string): Promise<void> {
    await this.call(sessionId, (handle) => handle.signal(wire.turnEndSignal, {}));
  }

  /**
   * Starts a subagent of `parentId` as a child session named `name` (unique within the parent)
   * and returns its session id, `<parent>/<name>`.
   *
   * With `updateId`, a spawn retried with the same id starts the child once and answers the
   * same result (what the agent loop's tool calls rely on).
   *
   * @throws TodoRejectedError (`subagent-name`, `subagent-exists`) for a bad or taken name.
   */
  async spawnSubagent(parentId: string, input: SubagentSpawnInput, options: { updateId?: string } = {}): Promise<SubagentSpawnResult> {
    const update = { args: [input] as [SubagentSpawnInput], ...(options.updateId !== undefined ? { updateId: options.updateId } : {}) };
    return this.call(parentId, (handle) => this.watched(parentId, () => handle.executeUpdate(wire.subagentSpawnUpdate, update), options.updateId));
  }

  /** The current list, or `null` when the current turn has none. Works on closed sessions. */
  async todos(sessionId: string): Promise<TodoList> {
    return this.queried(sessionId, wire.todosQuery);
  }

  /**
   * Resolves when a session of this id exists, running or closed, asking Temporal alone: no
   * worker has to answer, so it holds while the session's workers are down or busy (what a reader
   * of the session's word stream needs before it opens).
   *
   * @throws SessionNotFoundError when no workflow has the id, or the one that has it is not a session.
   */
  async assertExists(sessionId: string): Promise<void> {
    await this.call(
      sessionId,
      async (handle) => {
        const described = await handle.describe();
        if (described.type !== wire.SESSION_WORKFLOW_TYPE) throw new SessionNotFoundError(sessionId);
      },
      'read',
    );
  }

  /** Turn, list, counts, version, parent and children of the session. Works on closed sessions. */
  async session(sessionId: string): Promise<SessionSnapshot> {
    return this.queried(sessionId, wire.sessionQuery);
  }

  /**
   * The session with its list and counts, and its subagents recursively: the root is its own
   * `session` query; the subagents come from their search attributes, one visibility call per
   * level (status, counts, the contents of the todos in progress, version, last change), so a
   * tree costs the same whether its subagents are working or not. Visibility lags the sessions
   * by a little (see the docs), so a subagent's summary may trail its last write by that much.
   * With `full`, every subagent's whole list is read too (one query per open subagent; a closed
   * one is read once and then kept while its listing is unchanged). With `limit`, one page of the
   * root's subagents and the `nextPageToken` of the next.
   *
   * @throws InvalidInputError for a `limit` that is not an integer from 1 to 1,000, or a page token
   *   this tree did not give; SessionNotFoundError when there is no such session.
   */
  async tree(sessionId: string, options: TreeOptions = {}): Promise<SessionTree> {
    return readTree(
      {
        session: (id) => this.session(id),
        children: (parents, page) => this.guard(sessionId, () => listChildren(this.temporal, parents, page), 'read'),
        node: (id, listed) => this.treeNode(id, listed),
      },
      sessionId,
      options,
    );
  }

  /** A subagent as a full tree shows it: kept if it closed and its listing is unchanged, else read now. */
  private async treeNode(sessionId: string, listed: SessionListing | undefined): Promise<TreeNodeSource> {
    if (listed?.status === 'closed' && listed.version !== null) {
      const kept = this.closedTreeNodes.get(sessionId, listed.version, listed.updatedAt);
      if (kept !== undefined) return kept;
    }
    const snapshot = await this.session(sessionId);
    this.closedTreeNodes.remember(snapshot);
    return snapshot;
  }

  /**
   * The sessions of this client's task queue, newest first, read from Temporal's visibility in
   * one call per page (no session is queried: each keeps its listing in search attributes).
   * Filters: `open`, `parent` (the subagents of a session), `inProgress` (at least one todo in
   * progress). Every page is read unless `limit` is given; {@link listPage} gives one page and
   * the token of the next.
   */
  async list(options: Omit<ListOptions, 'pageToken'> = {}): Promise<SessionListing[]> {
    return (await this.listPage(options)).sessions;
  }

  /**
   * One page of {@link list}: at most `limit` sessions (default 100) and the `nextPageToken` to
   * pass for the next page (`null` after the last). A session started before sessions indexed
   * themselves (and not yet continued as new) is read from the session itself.
   */
  async listPage(options: ListOptions = {}): Promise<SessionPage> {
    return this.guard('list', () =>
      listSessions(this.temporal, this.taskQueue, options, async (id, running) => {
        const snapshot = await (running ? this.session(id) : (this.temporal.workflow.getHandle(id).result() as Promise<SessionSnapshot>)).catch(() => undefined);
        return snapshot === undefined
          ? undefined
          : { parent: snapshot.parent?.sessionId ?? null, counts: snapshot.counts, version: snapshot.version, ...(snapshot.updatedAt ? { updatedAt: snapshot.updatedAt } : {}) };
      }),
    'read');
  }

  /** Closes the session and, first, its open subagents; queries keep answering. Idempotent. */
  async close(sessionId: string): Promise<SessionSnapshot> {
    try {
      return await this.call(sessionId, (handle) => handle.executeUpdate(wire.closeUpdate, { args: [{}] }));
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
    return this.call(sessionId, () => exportSessionHistory(this.temporal, sessionId), 'read');
  }

  /** Closes the connection if this client opened it. */
  async closeConnection(): Promise<void> {
    if (!this.ownsConnection) return;
    // A call given up on (its reason found first) may still be between retries: the SDK's retry
    // interceptor starts the next attempt from a timer even after a cancel. Let such calls end
    // first, for at most ten seconds; an attempt that comes later still finds the connection
    // closed, and ends with CANCELLED instead of throwing (closedConnectionGuard).
    if (this.abandoned.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.allSettled([...this.abandoned]), new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
      clearTimeout(timer);
    }
    await this.temporal.connection.close();
  }

  /**
   * Gives the session's agent a message (`user/message`). It starts a turn at once, or waits
   * for the running turn to end (`queued: true`). A top-level session that does not exist yet
   * is created by its first message (update-with-start), so `chat new-id "..."` just works; a
   * subagent must have been spawned first.
   *
   * @throws RequestRejectedError (`empty-message`, `message-too-long`, `queue-full`, `shape`);
   *   SessionClosedError when the session was closed.
   */
  async sendMessage(sessionId: string, text: string): Promise<UserMessageResult> {
    return this.updateWithStart(sessionId, wire.userMessageUpdate, [{ text }], randomUUID());
  }

  /**
   * Ends the running turn (`turn/interrupt`): its model call is cancelled and the turn ends as
   * `interrupted`; the list stays. Answers once the loop has stopped, with how the turn ended.
   *
   * @throws RequestRejectedError (`no-running-turn`) when no turn runs.
   */
  async interrupt(sessionId: string): Promise<TurnOutcome | null> {
    return this.call(sessionId, (handle) => this.watched(sessionId, () => handle.executeUpdate(wire.turnInterruptUpdate, { args: [{}] })));
  }

  /**
   * Lets a tool call that waits for a person run (`tool/approve`).
   *
   * @throws RequestRejectedError (`no-pending-call`) when no call with that id waits.
   */
  async approve(sessionId: string, callId: string, reason?: string): Promise<ToolDecisionResult> {
    return this.decide(sessionId, wire.toolApproveUpdate, callId, reason);
  }

  /**
   * Refuses a tool call that waits for a person (`tool/deny`); the model reads the refusal,
   * with the reason, as the call's result.
   *
   * @throws RequestRejectedError (`no-pending-call`) when no call with that id waits.
   */
  async deny(sessionId: string, callId: string, reason?: string): Promise<ToolDecisionResult> {
    return this.decide(sessionId, wire.toolDenyUpdate, callId, reason);
  }

  /**
   * Trusts the new definitions of tools the session withholds because they changed after it
   * first offered them (`tool/accept`): those named, or every withheld one. They are offered
   * again from the next turn.
   *
   * @throws RequestRejectedError (`no-withheld-tool`) for a name that is not withheld, or when none is.
   */
  async acceptTools(sessionId: string, names?: readonly string[]): Promise<ToolAcceptResult> {
    const input = names !== undefined && names.length > 0 ? { names: [...names] } : {};
    return this.call(sessionId, (handle) => this.watched(sessionId, () => handle.executeUpdate(wire.toolAcceptUpdate, { args: [input] })));
  }

  /** The conversation of the session's agent loop, its usage and its last turn. Works on closed sessions. */
  async transcript(sessionId: string): Promise<Transcript> {
    return this.queried(sessionId, wire.transcriptQuery);
  }

  /**
   * What the model calls cost: this session's own usage, and the tree's (this session plus every
   * subagent below it, closed ones included), read from each session's `session` query. A
   * subagent its parent records as closed is read once: its subtree's usage cannot change again,
   * so later calls take it from {@link closedUsage} (a query to a closed workflow replays its
   * whole history on a worker).
   */
  async usage(sessionId: string): Promise<{ session: Usage; tree: Usage }> {
    const treeUsage = async (snapshot: SessionSnapshot): Promise<Usage> => {
      const below = await Promise.all(
        snapshot.children.map(async (child) => {
          const kept = child.closed ? this.closedUsage.get(child.sessionId) : undefined;
          if (kept !== undefined) return kept;
          const read = await this.session(child.sessionId);
          const usage = await treeUsage(read);
          if (child.closed && read.closed) this.closedUsage.set(child.sessionId, usage);
          return usage;
        }),
      );
      return below.reduce((sum, usage) => addUsage(sum, usage), addUsage(NO_USAGE, snapshot.usage));
    };
    const root = await this.session(sessionId);
    return { session: addUsage(NO_USAGE, root.usage), tree: await treeUsage(root) };
  }

  /**
   * Sends an update, starting the session first when it is a top-level one that does not exist
   * (update-with-start). A subagent exists only once its parent spawned it: an update to one that
   * does not exist must not create a top-level session under its id, so subagent ids are sent to
   * directly.
   */
  private async updateWithStart<Ret, Args extends [unknown, ...unknown[]]>(
    sessionId: string,
    update: UpdateDefinition<Ret, Args>,
    args: Args,
    updateId: string,
  ): Promise<Ret> {
    requireId(sessionId);
    const send = sessionId.includes(SESSION_ID_SEPARATOR)
      ? () => this.temporal.workflow.getHandle(sessionId).executeUpdate(update, { args, updateId })
      : () =>
          this.temporal.workflow.executeUpdateWithStart(update, {
            args,
            updateId,
            startWorkflowOperation: new WithStartWorkflowOperation(wire.SESSION_WORKFLOW_TYPE, {
              ...this.startOptions(sessionId, this.startInput),
              workflowIdConflictPolicy: 'USE_EXISTING',
            }),
          });
    if (!sessionId.includes(SESSION_ID_SEPARATOR)) requireTopLevelId(sessionId);
    // Temporal admits 10 updates in flight per workflow; past that it answers "resource
    // exhausted". And it drops the updates it admitted but did not yet accept when it clears a
    // workflow's update registry (a burst of writes while the session continues as new), asking
    // for them again. Sending the same update id again is safe (applied at most once), so a burst
    // of writers queues here with backoff instead of seeing either; the call's abort signal (the
    // reason found, or the caller's own deadline) ends the resending too.
    const resending = (): Promise<Ret> => withBusyRetry(send, { attempts: 20, retryable: isResendableUpdateError, signal: this.callSignal() });
    return this.guard(sessionId, () => this.watched(sessionId, resending, updateId), 'change', updateId);
  }

  private async decide(
    sessionId: string,
    update: typeof wire.toolApproveUpdate,
    callId: string,
    reason: string | undefined,
  ): Promise<ToolDecisionResult> {
    const input = { callId, ...(reason !== undefined ? { reason } : {}) };
    return this.call(sessionId, (handle) => this.watched(sessionId, () => handle.executeUpdate(update, { args: [input] })));
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

  /** The abort signal the current call runs under (`connection.withAbortSignal`), if any. */
  /**
   * Asks a query, asking again while Temporal is busy; the retrying stops with the call: its
   * reason found by {@link watched}, or the caller's own abort signal.
   */
  private async queried<Ret>(sessionId: string, query: QueryDefinition<Ret, []>): Promise<Ret> {
    return this.call(sessionId, (handle) => this.watched(sessionId, () => withBusyRetry(() => handle.query(query), { signal: this.callSignal() })), 'read');
  }

  private callSignal(): AbortSignal | undefined {
    return (this.temporal.connection as Connection).callContextStorage?.getStore()?.abortSignal;
  }

  private async call<T>(sessionId: string, action: (handle: WorkflowHandle) => Promise<T>, kind: CallKind = 'change'): Promise<T> {
    return this.guard(sessionId, () => action(this.temporal.workflow.getHandle(sessionId)), kind);
  }

  private async guard<T>(sessionId: string, action: () => Promise<T>, kind: CallKind = 'change', updateId?: string): Promise<T> {
    requireId(sessionId);
    try {
      return await action();
    } catch (error) {
      throw await this.explain(sessionId, error, kind, updateId);
    }
  }

  /**
   * A healthy session answers in milliseconds. When `answer` has not come after
   * `diagnoseAfterMs`, look at why: a session whose workflow task fails, or whose task queue no
   * worker polls, fails at once with that reason instead of after Temporal's own timeout.
   */
  private async watched<T>(sessionId: string, ask: () => Promise<T>, updateId?: string): Promise<T> {
    // Once the reason is known the call is cancelled, so nothing waits on for Temporal's own
    // timeout; a caller's own abort signal (the HTTP service's deadline) still applies too.
    const controller = new AbortController();
    const outer = this.callSignal();
    const signal = outer !== undefined ? AbortSignal.any([outer, controller.signal]) : controller.signal;
    const answer = this.temporal.connection.withAbortSignal(signal, ask);
    let timer: NodeJS.Timeout | undefined;
    // The look runs under its own signal, cancelled when the answer comes first: no call of it
    // may outlive this one (a retried call on a closed connection throws from a timer).
    const looking = new AbortController();
    const diagnosis = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.temporal.connection.withAbortSignal(looking.signal, () => this.unanswered(sessionId, updateId)).then(
          (reason) => {
            if (reason === undefined) return;
            reject(reason);
            controller.abort(reason);
            const settled = answer.then(
              () => undefined,
              () => undefined,
            );
            this.abandoned.add(settled);
            void settled.then(() => this.abandoned.delete(settled));
          },
          () => undefined,
        );
      }, this.diagnoseAfterMs);
    });
    try {
      return await Promise.race([answer, diagnosis]);
    } finally {
      clearTimeout(timer);
      looking.abort();
    }
  }

  /**
   * Why a session cannot answer, or `undefined` when nothing is wrong that can be seen: its
   * workflow task fails (the last one closed with WorkflowTaskFailed and it is being retried),
   * or no worker polls its task queue.
   */
  private async unanswered(sessionId: string, pendingUpdateId?: string): Promise<AgentSessionsError | undefined> {
    const service = this.temporal.connection.workflowService;
    const namespace = this.temporal.options.namespace;
    const described = await this.temporal.workflow.getHandle(sessionId).describe();
    if (described.status.name !== 'RUNNING') return undefined;
    const pending = described.raw.pendingWorkflowTask;
    if (pending !== null && pending !== undefined && (pending.attempt ?? 1) > 1) {
      const { history } = await service.getWorkflowExecutionHistoryReverse({
        namespace,
        execution: { workflowId: sessionId, runId: described.runId },
        maximumPageSize: 20,
      });
      const EventType = proto.api.enums.v1.EventType;
      const lastTask = history?.events?.find((event) =>
        [EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED, EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT].includes(event.eventType ?? 0),
      );
      const failed = lastTask?.workflowTaskFailedEventAttributes;
      if (failed) return new SessionBrokenError(sessionId, failed.failure?.message?.split('\n')[0]?.slice(0, 400) ?? undefined, pending.attempt ?? 2, pendingUpdateId);
    }
    if (!(await this.anyPoller(described.taskQueue))) return new NoWorkerError(sessionId, described.taskQueue, pendingUpdateId);
    return undefined;
  }

  /**
   * Whether any worker has polled the workflow task queue lately. Temporal's answer for a task
   * queue names the pollers of its root partition alone, and a queue has several (4 by default):
   * a worker that started a moment ago may so far have polled only the others. So when the root
   * names none, the other partitions of the default layout are asked too (a partition that does
   * not exist names none).
   */
  private async anyPoller(taskQueue: string): Promise<boolean> {
    const service = this.temporal.connection.workflowService;
    const namespace = this.temporal.options.namespace;
    const pollersOf = async (name: string): Promise<number> => {
      const { pollers } = await service.describeTaskQueue({
        namespace,
        taskQueue: { name, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
        taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return (pollers ?? []).length;
    };
    if ((await pollersOf(taskQueue)) > 0) return true;
    const others = await Promise.all(
      Array.from({ length: DEFAULT_TASK_QUEUE_PARTITIONS - 1 }, (_, k) => pollersOf(`/_sys/${taskQueue}/${k + 1}`).catch(() => 0)),
    );
    return others.some((count) => count > 0);
  }

  /** The library error a Temporal error means, found by its type and gRPC code, never its text. */
  private async explain(sessionId: string, error: unknown, kind: CallKind, updateId?: string): Promise<unknown> {
    if (error instanceof AgentSessionsError) return error;
    const translated = this.translate(sessionId, error, kind);
    if (translated !== error) return translated;
    if (error instanceof WorkflowNotFoundError && kind === 'change') {
      // Temporal answers "not found" both for unknown ids and for messages to closed runs.
      const closed = await this.temporal.workflow.getHandle(sessionId).describe().then(
        () => true,
        () => false,
      );
      return closed ? new SessionClosedError(sessionId) : new SessionNotFoundError(sessionId);
    }
    const code = grpcCode(error);
    if (code === GRPC.CANCELLED) return error; // The caller gave up on purpose (an abort signal).
    if (code === GRPC.DEADLINE_EXCEEDED || error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
      // No answer in time: Temporal may be unreachable, or reachable and the session unable to
      // answer. Asking Temporal about the session tells which.
      let reason: AgentSessionsError | undefined;
      try {
        reason = await this.unanswered(sessionId, kind === 'change' ? updateId : undefined);
      } catch (cause) {
        return new TemporalUnavailableError(this.address, this.temporal.options.namespace, cause);
      }
      if (reason !== undefined) return reason;
      return kind === 'change' ? new OutcomeUnknownError(sessionId, updateId) : new SessionTimeoutError(sessionId);
    }
    if (code === GRPC.UNAVAILABLE) return new TemporalUnavailableError(this.address, this.temporal.options.namespace, error);
    return error;
  }

  private translate(sessionId: string, error: unknown, kind: CallKind): unknown {
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
      const failure = error.cause;
      if (failure.type === 'TodoRejected' || failure.type === 'SpawnRejected' || failure.type === 'RequestRejected') {
        const detail = (failure.details?.[0] ?? {}) as { rule?: RejectionRule; problems?: RejectionProblem[] };
        if (detail.rule === 'session-closed') return new SessionClosedError(sessionId);
        const Rejected = failure.type === 'SpawnRejected' ? SpawnRejectedError : failure.type === 'TodoRejected' ? TodoRejectedError : RequestRejectedError;
        return new Rejected(failure.message, detail.rule ?? 'shape', detail.problems ?? []);
      }
    }
    if (error instanceof WorkflowExecutionAlreadyStartedError) return new SessionClosedError(sessionId);
    if (error instanceof WorkflowNotFoundError && kind === 'read') return new SessionNotFoundError(sessionId);
    return error;
  }
}

/** How many partitions a Temporal task queue has unless its server is configured otherwise (`matching.numTaskqueueReadPartitions`). */
const DEFAULT_TASK_QUEUE_PARTITIONS = 4;

/** Whether a call changes a session (its outcome matters if no answer comes) or only reads it. */
type CallKind = 'change' | 'read';

/** The task a session's first run was started with, if any: a fork keeps it. */
function firstRunTask(run: SessionRun): string | undefined {
  const task = runInputOf(run.history).task;
  return typeof task === 'string' ? task : undefined;
}

/** The ApplicationFailure at the root of a failed workflow (through its activity), if any. */
function failureOf(error: unknown): ApplicationFailure | undefined {
  let cause: unknown = error;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    if (cause instanceof ApplicationFailure) return cause;
    cause = cause.cause;
  }
  return undefined;
}

function defined<T extends Record<string, unknown>>(values: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as never;
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
    if (error instanceof Rejection) throw new TodoRejectedError(error.message, error.rule, error.problems);
    throw error;
  }
  const detail =
    bytes === undefined
      ? 'the arguments cannot be encoded as JSON; send a plain {"todos": [...]}'
      : `the arguments are ${bytes} bytes of JSON, more than the ${LARGEST_SENT_ARGUMENTS} a write can carry`;
  const rule = bytes === undefined ? ('shape' as const) : ('list-too-large' as const);
  throw new TodoRejectedError(`todo_write rejected: ${detail} [${rule}]`, rule, [{ rule, path: 'arguments', detail }]);
}

function requireId(sessionId: string): void {
  if (typeof sessionId !== 'string' || sessionId.trim() === '') throw new MissingSessionIdError();
}

/** A top-level session (one this client starts) has an id without `/` (or U+0000, see {@link newSessionIdProblem}). */
function requireTopLevelId(sessionId: string): void {
  requireId(sessionId);
  const problem = newSessionIdProblem(sessionId);
  if (problem !== undefined) throw new InvalidSessionIdError(sessionId, problem);
}
