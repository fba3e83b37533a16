import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  currentUpdateInfo,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  acceptTodoWrite,
  applySessionEvent,
  countTodos,
  INITIAL_SESSION_STATE,
  renderCounts,
  snapshotSession,
  TodoRejection,
  type SessionEvent,
  type SessionSnapshot,
  type SessionState,
} from '../src/todo';
import { deploymentPolicy } from './deployment-policy';
import {
  closeUpdate,
  sessionQuery,
  todosQuery,
  todoWriteUpdate,
  turnEndSignal,
  turnStartSignal,
  type AgentSessionInput,
  type TodoWriteResult,
} from './messages';

/**
 * One agent session. Its history is the session's log: accepted `todo_write` updates and turn
 * signals; its state is the fold of that log. Runs until closed, then returns its final state
 * (queries keep answering on the closed workflow).
 */
export async function agentSession(_input: AgentSessionInput = {}): Promise<SessionSnapshot> {
  let state: SessionState = INITIAL_SESSION_STATE;
  const sessionId = workflowInfo().workflowId;
  // Every change goes through the pure fold, so replay and offline folds compute the same state.
  const apply = (event: SessionEvent): void => {
    state = applySessionEvent(state, event);
  };

  setHandler(
    todoWriteUpdate,
    (args): TodoWriteResult => {
      // The invariant inside the fold is not caught here: a log that breaks it must fail the
      // workflow task loudly (live or on replay), never be answered or repaired.
      apply({ type: 'todo/write', todos: args.todos, label: `todo/write of update ${currentUpdateInfo()?.id ?? '?'}` });
      const counts = countTodos(state.todos);
      return { ...counts, message: renderCounts(counts), version: state.version };
    },
    {
      validator: (args): void => {
        if (state.closed) throw rejected(`session ${sessionId} is closed and accepts no more writes`, 'session-closed');
        try {
          acceptTodoWrite(args, deploymentPolicy());
        } catch (error) {
          if (error instanceof TodoRejection) throw rejected(error.message, error.rule, error.problems);
          throw error;
        }
      },
    },
  );

  setHandler(turnStartSignal, () => apply({ type: 'turn/start' }));
  setHandler(turnEndSignal, () => apply({ type: 'turn/end' }));

  setHandler(closeUpdate, (): SessionSnapshot => {
    if (!state.closed) apply({ type: 'session/close' });
    return snapshotSession(sessionId, state);
  });

  setHandler(todosQuery, () => state.todos);
  setHandler(sessionQuery, () => snapshotSession(sessionId, state));

  await condition(() => state.closed);
  await condition(allHandlersFinished);
  return snapshotSession(sessionId, state);
}

function rejected(message: string, rule: string, problems: unknown = []): ApplicationFailure {
  return ApplicationFailure.create({ type: 'TodoRejected', message, nonRetryable: true, details: [{ rule, problems }] });
}
