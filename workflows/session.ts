import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  currentUpdateInfo,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  acceptSubagentSpawn,
  acceptTodoWrite,
  applySessionEvent,
  assertCarriedState,
  checkWriteOptions,
  childSessionId,
  countTodos,
  findReceipt,
  INITIAL_SESSION_STATE,
  snapshotSession,
  TodoRejection,
  writeResult,
  type SessionEvent,
  type SessionSnapshot,
  type SessionState,
  type TodoCounts,
  type TodoWriteArgs,
} from '../src/todo/workflow-api';
import { deploymentPolicy } from './deployment-policy';
import {
  closeUpdate,
  DEFAULT_CONTINUE_AS_NEW_AFTER,
  sessionCloseSignal,
  sessionQuery,
  subagentClosedSignal,
  subagentSpawnUpdate,
  todosQuery,
  todoWriteUpdate,
  turnEndSignal,
  turnStartSignal,
  type AgentSessionInput,
  type SubagentClosedInput,
  type SubagentSpawnResult,
  type TodoWriteOptions,
  type TodoWriteResult,
} from './messages';

/** How long a closing parent waits for its subagents to report that they closed. */
const CHILDREN_CLOSE_TIMEOUT = '1 minute';

/**
 * One agent session. Its history is the session's log: accepted `todo_write` and
 * `subagent/spawn` updates, turn and close signals, reports of closed subagents; its state is the
 * fold of that log. Continues as new when the run grows long, carrying its state; runs until
 * closed, then returns its final state (queries keep answering on the closed workflow).
 */
export async function agentSession(input: AgentSessionInput = {}): Promise<SessionSnapshot> {
  const sessionId = workflowInfo().workflowId;
  if (input.carried !== undefined) assertCarriedState(input.carried);
  let state: SessionState = input.carried ?? INITIAL_SESSION_STATE;
  const about = { parent: input.parent ?? null, task: input.task ?? null };
  const limit = input.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER;
  let appliedThisRun = 0;

  // Every change goes through the pure fold, so replay and the offline fold compute the same
  // state. An invariant failure inside it is deliberately not caught: a log that breaks the
  // invariant must fail the workflow task loudly, live or on replay, never be answered.
  const apply = (event: SessionEvent): void => {
    const next = applySessionEvent(state, { ...event, at: new Date().toISOString() });
    if (next !== state) appliedThisRun++;
    state = next;
  };
  const close = (): void => apply({ type: 'session/close' });
  // The check first: a condition with a timeout starts a timer, and a session without open
  // subagents must not add one to its history.
  const childrenClosed = async (): Promise<void> => {
    const allClosed = (): boolean => state.children.every((child) => child.closed);
    if (!allClosed()) await condition(allClosed, CHILDREN_CLOSE_TIMEOUT);
  };

  setHandler(
    todoWriteUpdate,
    (args: TodoWriteArgs, _options?: TodoWriteOptions): TodoWriteResult => {
      const updateId = currentUpdateInfo()?.id;
      // A retry of a write already applied (possibly in an earlier run) answers from its receipt.
      const receipt = findReceipt(state, updateId);
      if (receipt !== undefined) return receipt.result;
      apply({ type: 'todo/write', todos: args.todos, label: `todo/write of update ${updateId ?? '?'}`, ...(updateId ? { updateId } : {}) });
      return writeResult(state);
    },
    {
      validator: (args: TodoWriteArgs, options?: TodoWriteOptions): void => {
        if (findReceipt(state, currentUpdateInfo()?.id) !== undefined) return;
        if (state.closed) throw rejected(`todo_write rejected: session ${sessionId} is closed and accepts no more writes`, 'session-closed');
        asFailure(() => {
          checkWriteOptions(options, state.version);
          acceptTodoWrite(args, deploymentPolicy());
        });
      },
    },
  );

  setHandler(
    subagentSpawnUpdate,
    async (request): Promise<SubagentSpawnResult> => {
      const { name, task } = acceptSubagentSpawn(request, state);
      const childId = childSessionId(sessionId, name);
      apply({ type: 'subagent/spawn', name, sessionId: childId, ...(task !== undefined ? { task } : {}) });
      await startChild('agentSession', {
        workflowId: childId,
        args: [{ parent: { sessionId, name }, ...(task !== undefined ? { task } : {}), continueAsNewAfter: limit }],
        // Children must outlive their parent's continue-as-new; closing is done explicitly below.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      return { sessionId: childId, name };
    },
    { validator: (request): void => asFailure(() => void acceptSubagentSpawn(request, state)) },
  );

  setHandler(turnStartSignal, () => apply({ type: 'turn/start' }));
  setHandler(turnEndSignal, () => apply({ type: 'turn/end' }));
  setHandler(sessionCloseSignal, close);
  setHandler(subagentClosedSignal, (report?: Partial<SubagentClosedInput>) =>
    apply({ type: 'subagent/closed', sessionId: report?.sessionId as string, counts: report?.counts as TodoCounts }),
  );
  setHandler(closeUpdate, async (): Promise<SessionSnapshot> => {
    close();
    await childrenClosed();
    return snapshotSession(sessionId, state, about);
  });

  setHandler(todosQuery, () => state.todos);
  setHandler(sessionQuery, () => snapshotSession(sessionId, state, about));

  for (;;) {
    await condition(() => state.closed || appliedThisRun >= limit || workflowInfo().continueAsNewSuggested);
    if (state.closed) break;
    await condition(allHandlersFinished);
    if (state.closed) break;
    await continueAsNew<typeof agentSession>({ ...input, carried: state });
  }

  await closeChildren(state);
  await childrenClosed();
  if (about.parent !== null) {
    await getExternalWorkflowHandle(about.parent.sessionId)
      .signal(subagentClosedSignal, { sessionId, counts: countTodos(state.todos) })
      .catch(() => undefined); // A parent that is gone has nobody to tell.
  }
  await condition(allHandlersFinished);
  return snapshotSession(sessionId, state, about);
}

async function closeChildren(state: SessionState): Promise<void> {
  await Promise.all(
    state.children
      .filter((child) => !child.closed)
      .map((child) =>
        getExternalWorkflowHandle(child.sessionId)
          .signal(sessionCloseSignal, { reason: 'parent closed' })
          .catch(() => undefined), // Already closed by someone else: its report is on its way.
      ),
  );
}

function asFailure(check: () => void): void {
  try {
    check();
  } catch (error) {
    // The message already lists at most ten problems; the details must stay as small, whatever
    // was sent (a failure larger than Temporal's payload limit would fail the workflow task).
    if (error instanceof TodoRejection) throw rejected(error.message, error.rule, error.problems.slice(0, 10));
    throw error;
  }
}

function rejected(message: string, rule: string, problems: unknown = []): ApplicationFailure {
  return ApplicationFailure.create({ type: 'TodoRejected', message, nonRetryable: true, details: [{ rule, problems }] });
}
