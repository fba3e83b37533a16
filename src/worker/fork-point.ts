import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Worker, type InjectedSinks, type WorkflowBundle } from '@temporalio/worker';
import type { ForkPointRequest } from '../../activities/fork-contract';
import type { ForkCaptureSinks } from '../../workflows/fork-capture';
import type { ObservedSession } from '../../workflows/session-observer';
import { fetchSessionRuns } from '../history/export-history';
import { foldHistory, runInputOf, stateAtEvent, timeOf, type History } from '../history/session-history';
import { eventsThroughTaskOf } from '../history/task-cut';
import { forkAt, INITIAL_AGENT_STATE, runStartAgent, type AgentState, type SessionFork, type SessionState } from '../session';
import { InvariantViolation } from '../todo/invariant';

/** The failure type of a fork point that does not exist (no such session, run or event): not retried. */
export const FORK_REFUSED = 'ForkRefused';
/** The failure type of a fork point whose run does not replay on this worker's code: not retried. */
export const FORK_REPLAY_FAILED = 'ForkReplayFailed';

/**
 * The state a fork of `request.sessionId` at event `eventId` of run `runId` starts from (see
 * `forkAt` for what a fork keeps and drops). Two sources, neither of them a second copy of the
 * workflow's logic:
 * - the session's state is the offline fold of the whole chain of runs at that event, the fold
 *   the timeline shows (a fork point in an earlier run starts from that run's carried state);
 * - the agent's state is what the session's own workflow code holds once it has taken that event
 *   in: the run's history is replayed up to the end of the workflow task that made or took in
 *   the event (`eventsThroughTaskOf`), with the fork capture's interceptor handing the state out
 *   through a sink.
 *
 * @param bundle the workflow bundle with the fork capture's interceptor (`forkCapture: true`).
 * @throws ApplicationFailure `ForkRefused` naming the session, run or event that does not
 *   exist; `ForkReplayFailed` when the run's history does not replay on this code.
 */
export async function forkPointOf(client: Client, request: ForkPointRequest, bundle: () => Promise<WorkflowBundle>): Promise<Required<SessionFork>> {
  const { sessionId, runId, eventId } = request;
  const runs = await fetchSessionRuns(client, sessionId).catch((error: unknown) => {
    if (error instanceof WorkflowNotFoundError) throw refused(`no session ${JSON.stringify(sessionId)} to fork from`);
    throw error;
  });
  const index = runs.findIndex((run) => run.runId === runId);
  if (index === -1) {
    throw refused(`session ${JSON.stringify(sessionId)} has no run ${JSON.stringify(runId)}; its runs are ${runs.map((run) => run.runId).join(', ')}`);
  }
  const history = runs[index]!.history;
  const events = history.events ?? [];
  if (!Number.isInteger(eventId) || eventId < 1 || eventId > events.length) {
    throw refused(`run ${runId} of session ${JSON.stringify(sessionId)} has no event ${eventId}; its events are 1 to ${events.length}`);
  }
  let state;
  try {
    state = stateAtEvent(foldHistory(runs.map((run) => run.history), sessionId), index + 1, eventId);
  } catch (error) {
    if (error instanceof InvariantViolation) throw replayFailed(`the history of session ${JSON.stringify(sessionId)} cannot be folded: ${error.message}`);
    throw error;
  }
  const agent = await agentStateAt(history, sessionId, eventId, state, await bundle());
  return forkAt({ state, agent }, { id: sessionId, runId, eventId }, timeOf(events[eventId - 1]!.eventTime) ?? null);
}

/**
 * The agent's state once the session's workflow code has taken in event `eventId` of a run: the
 * run replayed through the end of the workflow task that made or took in the event, the last
 * state the fork capture handed out. A turn's start and end are signals that the turn's own
 * activities send while the agent waits for their results: when the log at the event (`session`)
 * says a turn has started and the agent has not taken its message yet, or says it has ended and
 * the agent has not recorded how, the state is read at the first later task where the agent has
 * caught up (the run replayed whole). Before the run's first task, the state the run started with.
 *
 * @throws ApplicationFailure `ForkReplayFailed` when the history does not replay on this code.
 */
export async function agentStateAt(
  run: History,
  workflowId: string,
  eventId: number,
  session: SessionState,
  workflowBundle: WorkflowBundle,
): Promise<AgentState> {
  const events = run.events ?? [];
  const through = eventsThroughTaskOf(events, eventId);
  const started = runStartAgent(runInputOf(run)) ?? INITIAL_AGENT_STATE;
  const cut = await replayObserving(workflowBundle, workflowId, eventId, events.slice(0, through), () => true);
  const agent = cut ?? started;
  if (!lagsBehind(session, agent) || through === events.length) return agent;
  // The task that took the event in starts at the last WorkflowTaskStarted it holds.
  const target = lastTaskStarted(events, through);
  let caughtUp = false;
  const later = await replayObserving(workflowBundle, workflowId, eventId, events, (historyLength, observed) => {
    if (caughtUp) return false;
    if (historyLength > target && !lagsBehind(session, observed.agent)) caughtUp = true;
    return true;
  });
  return later ?? agent;
}

/**
 * Replays `events` with the fork capture's sink and answers the last state it kept: each state
 * handed out is kept while `keep(historyLength, state)` says so.
 */
async function replayObserving(
  workflowBundle: WorkflowBundle,
  workflowId: string,
  eventId: number,
  events: NonNullable<History['events']>,
  keep: (historyLength: number, observed: ObservedSession) => boolean,
): Promise<AgentState | undefined> {
  const kept: { agent?: AgentState } = {};
  const sinks: InjectedSinks<ForkCaptureSinks> = {
    forkCapture: {
      state: {
        fn: (info, observed) => {
          if (keep(info.historyLength, observed)) kept.agent = observed.agent;
        },
        callDuringReplay: true,
      },
    },
  };
  try {
    await Worker.runReplayHistory({ workflowBundle, replayName: 'agent-sessions-fork', sinks }, { events }, workflowId);
  } catch (error) {
    throw replayFailed(`the history of session ${JSON.stringify(workflowId)} does not replay on this worker's workflow code up to event ${eventId}: ${(error as Error).message.split('\n')[0]}`);
  }
  return kept.agent;
}

/** Whether the agent has not caught up yet with a turn's start or end that the log already holds. */
function lagsBehind(session: SessionState, agent: AgentState): boolean {
  const activity = agent.activity.state;
  if (session.turnOpen) return activity === 'starting';
  return activity === 'calling-model' || activity === 'running-tools' || activity === 'waiting-approval';
}

/** The id of the last WorkflowTaskStarted event among the first `count` events (0 when none). */
function lastTaskStarted(events: NonNullable<History['events']>, count: number): number {
  for (let i = count - 1; i >= 0; i--) if (events[i]?.workflowTaskStartedEventAttributes) return i + 1;
  return 0;
}

function refused(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FORK_REFUSED, message, nonRetryable: true });
}

function replayFailed(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FORK_REPLAY_FAILED, message, nonRetryable: true });
}
