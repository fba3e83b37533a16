import type { SessionRun } from '../history/export-history';
import { foldHistory } from '../history/session-history';
import type { ForkOrigin } from '../session';
import { InvariantViolation } from '../todo/invariant';
import { InvalidInputError, ReplayFailedError, RequestRejectedError } from './errors';

/**
 * Where to fork a session: at a history event of one of its runs (the current run when `runId`
 * is not given), or just before a turn began. Nothing (`{}`) means the newest event.
 */
export type ForkAt = { eventId: number; runId?: string } | { beforeTurn: number } | Record<string, never>;

/**
 * The run and event a fork point names in a session's chain of runs (oldest first):
 * - `{eventId, runId?}`: that event of that run (event ids are those `temporal workflow show`
 *   prints for the run), the current run's without `runId`;
 * - `{beforeTurn: N}`: the event right before the `turn/start` that began turn N (the state just
 *   before turn N: turn N-1 ended, its answer in the transcript, N's message not yet taken);
 * - `{}`: the newest event of the current run.
 *
 * @throws InvalidInputError for an event id or turn that is not a positive integer;
 *   RequestRejectedError (`no-such-run`, `no-such-event`, `no-such-turn`) naming the value and
 *   what the session has; ReplayFailedError when the history cannot be folded.
 */
export function resolveForkPoint(sessionId: string, runs: readonly SessionRun[], at: ForkAt = {}): ForkOrigin {
  const current = runs[runs.length - 1];
  if (current === undefined) throw new InvalidInputError(`session "${sessionId}" has no history to fork`);
  const name = JSON.stringify(sessionId);
  if ('beforeTurn' in at && at.beforeTurn !== undefined) {
    const turn = at.beforeTurn;
    if (!Number.isInteger(turn) || turn < 1) throw new InvalidInputError(`the turn to fork before must be a positive integer, got ${JSON.stringify(turn)}`);
    const { run, eventId, first, last } = turnStart(sessionId, runs, turn);
    if (run === undefined) {
      const has = last < first ? 'its history begins no turn' : first === last ? `its history begins turn ${first} only` : `its history begins turns ${first} to ${last}`;
      throw rejected('no-such-turn', 'beforeTurn', `session ${name} has no turn ${turn} to fork before; ${has}`);
    }
    return { id: sessionId, runId: run.runId, eventId: eventId - 1 };
  }
  if ('eventId' in at && at.eventId !== undefined) {
    const { eventId, runId } = at;
    if (!Number.isInteger(eventId) || eventId < 1) throw new InvalidInputError(`the event id to fork at must be a positive integer, got ${JSON.stringify(eventId)}`);
    const run = runId === undefined ? current : runs.find((candidate) => candidate.runId === runId);
    if (run === undefined) {
      throw rejected('no-such-run', 'runId', `session ${name} has no run ${JSON.stringify(runId)}; its runs, oldest first, are ${runs.map((r) => r.runId).join(', ')}`);
    }
    const count = run.history.events?.length ?? 0;
    if (eventId > count) {
      throw rejected('no-such-event', 'eventId', `run ${run.runId} of session ${name} has no event ${eventId}; its events are 1 to ${count}`);
    }
    return { id: sessionId, runId: run.runId, eventId };
  }
  return { id: sessionId, runId: current.runId, eventId: current.history.events?.length ?? 1 };
}

/**
 * Where turn `turn` began: the run and the event of its `turn/start`; and the first and last
 * turns the history begins (a fork's history begins after the turns it was given).
 */
function turnStart(sessionId: string, runs: readonly SessionRun[], turn: number): { run?: SessionRun | undefined; eventId: number; first: number; last: number } {
  let timeline;
  try {
    timeline = foldHistory(
      runs.map((run) => run.history),
      sessionId,
    );
  } catch (error) {
    if (error instanceof InvariantViolation) throw new ReplayFailedError(`the history of session "${sessionId}" cannot be folded: ${error.message}`);
    throw error;
  }
  const first = (timeline.starts[0]?.turn ?? 0) + 1;
  let previous = first - 1;
  for (const step of timeline.steps) {
    // The turn/start that moved the count to `turn` (one sent to a closed session moves nothing).
    if (step.event.type === 'turn/start' && step.state.turn === turn && previous === turn - 1) {
      return { run: runs[step.run - 1], eventId: step.eventId, first, last: timeline.final.turn };
    }
    previous = step.state.turn;
  }
  return { eventId: 0, first, last: timeline.final.turn };
}

function rejected(rule: 'no-such-run' | 'no-such-event' | 'no-such-turn', path: string, detail: string): RequestRejectedError {
  return new RequestRejectedError(`fork rejected: ${detail} [${rule}]`, rule, [{ rule, path, detail }]);
}
