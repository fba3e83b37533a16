/**
 * What a fork asks of the worker side: the state of a session at one event of its history. The
 * `forkPoint` workflow imports this file as types only; the worker registers the implementation
 * (activities/fork-activities.ts).
 */
import type { SessionFork } from '../src/session/fork';

/** A point of a session's history: the session, the run of its chain and the event id in it. */
export interface ForkPointRequest {
  sessionId: string;
  runId: string;
  eventId: number;
}

/** The fork's activities. */
export interface ForkActivities {
  /**
   * The state a fork of the session at that event starts from (see `forkAt`): the session's
   * state from the offline fold of its whole chain of runs, the agent's state from replaying the
   * run's history up to that event with this worker's workflow code. Fails (type `ForkRefused`,
   * not retried) naming the session, run or event that does not exist, or the run whose history
   * does not replay.
   */
  forkPoint(request: ForkPointRequest): Promise<Required<SessionFork>>;
}
