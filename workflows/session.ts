import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  currentUpdateInfo,
  getExternalWorkflowHandle,
  makeContinueAsNewFunc,
  ParentClosePolicy,
  patched,
  setDefaultSignalHandler,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
// The class the workflow runtime rejects `startChild` with when the child's id is taken;
// @temporalio/workflow does not re-export it.
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  acceptInterrupt,
  acceptSubagentSpawn,
  acceptTodoWrite,
  acceptToolAccept,
  acceptToolDecision,
  withheldNamed,
  acceptUserMessage,
  applySessionEvent,
  assertCarriedAgent,
  assertCarriedState,
  checkCarriedSample,
  checkSessionInput,
  checkWriteOptions,
  childSessionId,
  countTodos,
  findReceipt,
  ignoredSignalReason,
  runStartAgent,
  runStartState,
  SessionInputRejection,
  sessionIndexValues,
  snapshotSession,
  subagentIdTaken,
  Rejection,
  writeResult,
  type CarriedRefusal,
  type CarriedSample,
  type SessionEvent,
  type SessionInput,
  type SessionSnapshot,
  type SessionState,
  type TodoCounts,
  type TodoWriteArgs,
  type ToolAcceptInput,
} from '../src/session/workflow-api';
import { AgentLoop } from './agent-loop';
import { deploymentPolicy } from './deployment-policy';
import { indexSession, SESSION_INDEX_PATCH } from './session-index';
import { observeSession } from './session-observer';
import { startTraceparent, takeUpdateTraceparent } from './turn-trace';
import {
  closeUpdate,
  DEFAULT_CONTINUE_AS_NEW_AFTER,
  SESSION_WORKFLOW_TYPE,
  sessionCloseSignal,
  sessionQuery,
  subagentClosedSignal,
  subagentSpawnUpdate,
  todosQuery,
  todoWriteUpdate,
  toolAcceptUpdate,
  toolApproveUpdate,
  toolDenyUpdate,
  transcriptQuery,
  turnEndSignal,
  turnInterruptUpdate,
  turnStartSignal,
  userMessageUpdate,
  carriedQuery,
  sessionWakeSignal,
  type AgentSessionInput,
  type SessionMessageInput,
  type SubagentClosedInput,
  type SubagentSpawnResult,
  type TodoWriteUpdateOptions,
  type TodoWriteResult,
} from './messages';

/** How long a closing parent waits for its subagents to report that they closed. */
const CHILDREN_CLOSE_TIMEOUT = '1 minute';

/**
 * Marks runs in which a spawn whose child id was taken leaves nothing behind. Runs of the first
 * release recorded the subagent before starting its child, and kept it when the start failed;
 * their histories replay on that path.
 */
const REFUSED_SPAWN_LEAVES_NOTHING = 'refused-spawn-leaves-nothing';

/**
 * Marks runs that apply the signals of their first workflow task before its updates, as history
 * orders them. Runs recorded before registered an update's handler first, so a `turn/start` sent
 * right after the start and a `todo_write` sent right after it, landing in that first task, were
 * applied write first: the session then held another list than its history says.
 */
const SIGNALS_IN_HISTORY_ORDER = 'signals-in-history-order';

/**
 * Marks runs whose first workflow task records one patch marker (this one, which stands for
 * {@link SESSION_INDEX_PATCH} and {@link SIGNALS_IN_HISTORY_ORDER} together) and indexes the
 * session once, at the end of that task, with the state the task left. Runs recorded before made
 * two markers and two upserts there (one with the empty state at the start, one after a first
 * write that came with the start): two events of history per new session that Temporal stored
 * and the visibility store applied for nothing. They replay as they were recorded.
 */
const FIRST_TASK_INDEXED_ONCE = 'first-task-indexed-once';

/**
 * One agent session. Its history is the session's log: accepted `todo_write` and
 * `subagent/spawn` updates, turn and close signals, reports of closed subagents; its state is the
 * fold of that log. Continues as new when the run grows long, carrying its state; runs until
 * closed, then returns its final state (queries keep answering on the closed workflow).
 *
 * The input is untrusted (anyone who can start a workflow can send any): a run whose input it
 * cannot serve fails at once with an `InvalidSessionInput` failure naming the setting.
 */
export async function agentSession(rawInput: AgentSessionInput = {}): Promise<SessionSnapshot> {
  const info = workflowInfo();
  const sessionId = info.workflowId;
  const input = checkedInput(rawInput, info);
  if (input.carried !== undefined) assertCarriedState(input.carried);
  if (input.carriedAgent !== undefined) assertCarriedAgent(input.carriedAgent);
  // A fork's first run starts from the state it was given (checked with its input); every other
  // run from the state it carried, or from nothing.
  let state: SessionState = runStartState(input);
  const fork = input.fork !== undefined ? { from: input.fork.from, children: input.fork.children } : undefined;
  const about = { parent: input.parent ?? null, task: input.task ?? null, fork };
  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  let appliedThisRun = 0;
  /** Subagents whose child is being started: taken for the validator, not yet recorded. */
  const starting = new Set<string>();
  /** Subagents this run has asked to close. */
  const signalled = new Set<string>();
  /** A `session/wake` came: at the next boundary, ask whether this session's build is still served. */
  let releaseCheckAsked = false;
  const agent = new AgentLoop({ sessionId, state: () => state }, runStartAgent(input));
  // What a fork reads of this session when it replays its history up to an event (no command).
  observeSession(() => ({ state, agent: agent.state }));
  // The session's search attributes follow its state, so listing sessions is one visibility call.
  // Asked first, so that a run recorded before it asks the two patches it stands for where it did.
  const indexedOnce = patched(FIRST_TASK_INDEXED_ONCE);
  const flushIndex = indexSession(
    () => state,
    (now) => sessionIndexValues(now, about.parent),
    indexedOnce ? 'at-first-task-end' : patched(SESSION_INDEX_PATCH) ? 'at-start' : 'none',
  );
  // A subagent spawned by a model runs its task as its first message, then closes.
  if (input.agent === true && input.task !== undefined && info.continuedFromExecutionRunId === undefined) {
    agent.enqueue(input.task, new Date().toISOString(), startTraceparent());
  }

  // Every change goes through the pure fold, so replay and the offline fold compute the same
  // state. An invariant failure inside it is deliberately not caught: a log that breaks the
  // invariant must fail the workflow task loudly, live or on replay, never be answered.
  const apply = (event: SessionEvent): void => {
    const next = applySessionEvent(state, { ...event, at: new Date().toISOString() });
    // Only applied events move the version and the continue-as-new count; a listed ignored
    // signal does neither, so a flood of them cannot change when a run continues.
    if (next.version !== state.version) appliedThisRun++;
    state = next;
  };
  const close = (): void => apply({ type: 'session/close' });
  // The check first: a condition with a timeout starts a timer, and a session without open
  // subagents must not add one to its history.
  const childrenClosed = async (): Promise<void> => {
    const allClosed = (): boolean => state.children.every((child) => child.closed);
    if (!allClosed()) await condition(allClosed, CHILDREN_CLOSE_TIMEOUT);
  };
  const closeOpenChildren = async (): Promise<void> => {
    const open = state.children.filter((child) => !child.closed && !signalled.has(child.sessionId));
    for (const child of open) signalled.add(child.sessionId);
    await Promise.all(
      open.map((child) =>
        getExternalWorkflowHandle(child.sessionId)
          .signal(sessionCloseSignal, { reason: 'parent closed' })
          .catch(() => undefined), // Already closed by someone else: its report is on its way.
      ),
    );
  };

  const onSubagentClosed = (report?: Partial<SubagentClosedInput>): void =>
    apply({ type: 'subagent/closed', sessionId: report?.sessionId as string, counts: report?.counts as TodoCounts, ...(report?.answer !== undefined ? { answer: report.answer } : {}) });
  // A signal cannot be validated before Temporal logs it, so one this session does not handle
  // (a todo_write sent as a Signal above all) is never applied; it is listed, with what to send.
  const ignoreSignal = (name: string): void => apply({ type: 'signal/ignored', name, reason: ignoredSignalReason(name, sessionId) });
  /**
   * Registers what each signal applies. `routed`: one default handler routes them all by name,
   * so signals the SDK held back (see {@link SIGNALS_IN_HISTORY_ORDER}) come out in the order
   * they reached the history, whatever their names; otherwise one handler per name, as runs
   * recorded before did.
   */
  const registerSignals = (routed: boolean): void => {
    const named: Record<string, (input?: unknown) => void> = {
      [turnStartSignal.name]: () => apply({ type: 'turn/start' }),
      [turnEndSignal.name]: () => apply({ type: 'turn/end' }),
      [sessionCloseSignal.name]: close,
      // Its workflow task is the point: nothing to apply.
      [sessionWakeSignal.name]: () => void (releaseCheckAsked = true),
      [subagentClosedSignal.name]: (report) => onSubagentClosed(report as Partial<SubagentClosedInput> | undefined),
    };
    if (routed) {
      setDefaultSignalHandler((name: string, input?: unknown) => (Object.hasOwn(named, name) ? named[name]!(input) : ignoreSignal(name)));
      return;
    }
    setHandler(turnStartSignal, named[turnStartSignal.name]!);
    setHandler(turnEndSignal, named[turnEndSignal.name]!);
    setHandler(sessionCloseSignal, close);
    setHandler(sessionWakeSignal, named[sessionWakeSignal.name]!);
    setHandler(subagentClosedSignal, onSubagentClosed);
    setDefaultSignalHandler(ignoreSignal);
  };
  // Signals and updates that came with the run's first workflow task reach the SDK before this
  // function runs: it holds them, and hands each over when a handler for it is registered. In
  // history every such signal comes before every such update (the signals are events of their
  // own before the task started; the updates are accepted in its completion), so the signals'
  // handlers go first, and through one router (see registerSignals): the list the session holds
  // is then the one the offline fold computes from its history.
  const inHistoryOrder = indexedOnce || patched(SIGNALS_IN_HISTORY_ORDER);
  if (inHistoryOrder) registerSignals(true);

  // Handlers apply; validators judge. Only the durable invariant (inside the fold) may refuse
  // anything in a handler, because handlers run again on every replay and a rule that changes
  // between releases would fail histories that were valid when written.
  setHandler(
    todoWriteUpdate,
    (args: TodoWriteArgs, _options?: TodoWriteUpdateOptions): TodoWriteResult => {
      const updateId = currentUpdateInfo()?.id;
      // A retry of a write already applied (possibly in an earlier run) answers from its receipt.
      const receipt = findReceipt(state, updateId);
      if (receipt !== undefined) return receipt;
      apply({ type: 'todo/write', todos: args.todos, label: `todo/write of update ${updateId ?? '?'}`, ...(updateId ? { updateId } : {}) });
      return writeResult(state);
    },
    {
      validator: (args: TodoWriteArgs, options?: TodoWriteUpdateOptions, ...extra: unknown[]): void => {
        if (findReceipt(state, currentUpdateInfo()?.id) !== undefined) return;
        if (state.closed) throw rejected('TodoRejected', `todo_write rejected: session ${sessionId} is closed and accepts no more writes`, 'session-closed');
        asFailure('TodoRejected', () => {
          // A third argument would be logged with the write yet judged by nothing: refuse it.
          if (extra.length > 0) throw new Rejection([{ rule: 'shape', path: 'arguments', detail: `todo_write takes at most two arguments (the tool arguments and {"expectedVersion": N}), got ${2 + extra.length}` }]);
          checkWriteOptions(options, state.version);
          acceptTodoWrite(args, deploymentPolicy());
        });
      },
    },
  );

  setHandler(
    subagentSpawnUpdate,
    async ({ name, task, agent: runsAgent }): Promise<SubagentSpawnResult> => {
      const childId = childSessionId(sessionId, name);
      const spawn: SessionEvent = { type: 'subagent/spawn', name, sessionId: childId, ...(task !== undefined ? { task } : {}) };
      starting.add(name);
      try {
        await startChild(SESSION_WORKFLOW_TYPE, {
          workflowId: childId,
          args: [{ parent: { sessionId, name }, ...(task !== undefined ? { task } : {}), ...(runsAgent === true ? { agent: true } : {}), continueAsNewAfter: limit }],
          // Children must outlive their parent's continue-as-new; closing is done explicitly below.
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
        });
      } catch (error) {
        if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
        if (!patched(REFUSED_SPAWN_LEAVES_NOTHING)) {
          apply(spawn);
          throw error;
        }
        throw asApplicationFailure('SpawnRejected', subagentIdTaken(childId));
      } finally {
        starting.delete(name);
      }
      // Recorded only now that the child really started: a refused spawn leaves nothing behind.
      apply(spawn);
      return { sessionId: childId, name };
    },
    { validator: (request): void => asFailure('SpawnRejected', () => void acceptSubagentSpawn(request, state, starting)) },
  );

  // Signals registered here in runs recorded before SIGNALS_IN_HISTORY_ORDER (see above).
  if (!inHistoryOrder) registerSignals(false);
  setHandler(closeUpdate, async (): Promise<SessionSnapshot> => {
    close();
    agent.interrupt('closed');
    await childrenClosed();
    return snapshotSession(sessionId, state, about, agent.state);
  });

  setHandler(
    userMessageUpdate,
    ({ text }) => agent.enqueue(text, new Date().toISOString(), takeUpdateTraceparent(currentUpdateInfo()?.id)),
    { validator: (input): void => asFailure('RequestRejected', () => void acceptUserMessage(input, state.closed, agent.state.queue.length)) },
  );
  setHandler(
    turnInterruptUpdate,
    async (_input?: SessionMessageInput) => {
      // Wait for the end of the turn this interrupt stopped, not for 'idle': a queued message
      // starts its turn in the same workflow task that ends this one (condition() is evaluated
      // eagerly), so the loop may never be seen idle in between.
      const before = agent.state.lastTurn;
      agent.interrupt();
      await condition(() => agent.state.lastTurn !== before);
      return agent.state.lastTurn;
    },
    { validator: (_input?: SessionMessageInput): void => asFailure('RequestRejected', () => acceptInterrupt(agent.state)) },
  );
  for (const [update, approved] of [
    [toolApproveUpdate, true],
    [toolDenyUpdate, false],
  ] as const) {
    setHandler(
      update,
      ({ callId, reason }) => {
        agent.decide(callId, approved, reason);
        return { callId, decision: approved ? 'approved' : 'denied' };
      },
      { validator: (input): void => asFailure('RequestRejected', () => void acceptToolDecision(update.name as 'tool/approve' | 'tool/deny', input, agent.state)) },
    );
  }

  setHandler(
    toolAcceptUpdate,
    (input: ToolAcceptInput) => ({ accepted: agent.acceptTools(withheldNamed(input, agent.state.withheldTools ?? [])) }),
    { validator: (input: ToolAcceptInput): void => asFailure('RequestRejected', () => void acceptToolAccept(input, agent.state.withheldTools ?? [])) },
  );

  /** The input of the next run: the whole state, and the agent's once it has any. */
  // A fork's next runs keep where it came from, not the state it started with: that is carried.
  const nextInput = (): SessionInput => ({
    ...input,
    ...(fork !== undefined ? { fork } : {}),
    carried: state,
    ...(agent.state.revision > 0 ? { carriedAgent: agent.state } : {}),
  });
  setHandler(carriedQuery, nextInput);
  setHandler(todosQuery, () => state.todos);
  setHandler(sessionQuery, () => snapshotSession(sessionId, state, about, agent.state));
  setHandler(transcriptQuery, () => ({
    sessionId,
    messages: agent.state.conversation,
    compacted: agent.state.compacted,
    usage: agent.state.usage,
    lastTurn: agent.state.lastTurn,
    recentTurns: agent.state.recentTurns ?? [],
  }));

  // A session is pinned to the build its run started on, so a turn runs to its end on the code
  // that began it. `release promote` wakes every session of the other builds; at its next
  // boundary (now when idle, when its turn ends otherwise) the session asks where the deployment
  // routes (`releaseTarget`, an activity, so a replay reads the answer from history) and, when its
  // build is no longer served, continues as new onto the current one, carrying its whole state
  // and any message that waits: that message's turn runs on the new build. Temporal's
  // `targetWorkerDeploymentVersionChanged` is not used: the SDK does not restore it on replay, and
  // server 1.31.0 also sets it on tasks from a sticky queue, which carries no routing.
  for (;;) {
    await condition(() => state.closed || agent.hasWork() || appliedThisRun >= limit || workflowInfo().continueAsNewSuggested || releaseCheckAsked);
    if (state.closed) break;
    let moving = false;
    if (releaseCheckAsked) {
      releaseCheckAsked = false;
      moving = await agent.confirmRelease();
    }
    if (agent.hasWork() && !moving) {
      // A subagent spawned by a model runs its task, then closes (the signal is in its log).
      await agent.runNextTurn({ closeAfter: input.agent === true });
      continue;
    }
    if (!moving && appliedThisRun < limit && !workflowInfo().continueAsNewSuggested) continue;
    await condition(allHandlersFinished);
    if (state.closed) break;
    flushIndex?.();
    // The agent's state goes along only once it has any, so runs without one carry what they always did.
    if (moving) await makeContinueAsNewFunc<typeof agentSession>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(nextInput());
    await continueAsNew<typeof agentSession>(nextInput());
  }

  await closeOpenChildren();
  await childrenClosed();
  if (about.parent !== null) {
    await getExternalWorkflowHandle(about.parent.sessionId)
      .signal(subagentClosedSignal, { sessionId, counts: countTodos(state.todos), ...reportedAnswer(agent) })
      .catch(() => undefined); // A parent that is gone has nobody to tell.
  }
  await condition(allHandlersFinished);
  // A spawn that was starting its child when the session closed records the child only now:
  // this session started it, so this session closes it too.
  if (state.children.some((child) => !child.closed && !signalled.has(child.sessionId))) {
    await closeOpenChildren();
    await childrenClosed();
  }
  flushIndex?.();
  return snapshotSession(sessionId, state, about, agent.state);
}

/**
 * `release promote`'s check, started pinned to the build being promoted: runs that build's own
 * checks of a carried input on each sampled session's state and returns every refusal (empty
 * when the build accepts them all). Touches no session.
 */
export async function releaseCheck(samples: CarriedSample[] = []): Promise<CarriedRefusal[]> {
  if (!Array.isArray(samples)) throw ApplicationFailure.create({ type: 'InvalidReleaseCheck', message: 'releaseCheck takes an array of {sessionId, input}', nonRetryable: true });
  return samples.flatMap((sample) => checkCarriedSample(sample) ?? []);
}

/** What a subagent that ran its own agent loop tells its parent: its final answer, or why it has none. */
function reportedAnswer(agent: AgentLoop): { answer?: string } {
  const last = agent.state.lastTurn;
  if (last === null) return {};
  return { answer: last.answer ?? `(no answer: the turn ended with ${last.reason}${last.detail ? `: ${last.detail}` : ''})` };
}

/** The run's input once checked against Temporal's own facts about the run. */
function checkedInput(rawInput: unknown, info: ReturnType<typeof workflowInfo>): SessionInput {
  try {
    return checkSessionInput(rawInput, {
      workflowId: info.workflowId,
      parentWorkflowId: info.parent?.workflowId,
      continuedFromRunId: info.continuedFromExecutionRunId,
    });
  } catch (error) {
    if (error instanceof SessionInputRejection) {
      throw ApplicationFailure.create({ type: 'InvalidSessionInput', message: error.message, nonRetryable: true });
    }
    throw error;
  }
}

function asFailure(type: RejectionType, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof Rejection) throw asApplicationFailure(type, error);
    throw error;
  }
}

/** How a refusal travels: `TodoRejected` for writes, `SpawnRejected` for spawns, `RequestRejected` for the agent's messages. */
type RejectionType = 'TodoRejected' | 'SpawnRejected' | 'RequestRejected';

function asApplicationFailure(type: RejectionType, rejection: Rejection): ApplicationFailure {
  // The message already lists at most ten problems; the details must stay as small, whatever
  // was sent (a failure larger than Temporal's payload limit would fail the workflow task).
  return rejected(type, rejection.message, rejection.rule, rejection.problems.slice(0, 10));
}

function rejected(type: RejectionType, message: string, rule: string, problems: unknown = []): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, details: [{ rule, problems }] });
}
