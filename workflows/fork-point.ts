import { proxyActivities } from '@temporalio/workflow';
import type { ForkActivities, ForkPointRequest } from '../activities/fork-contract';
import type { SessionFork } from '../src/session/workflow-api';

// A long history replays in seconds, but the first fork on a worker also bundles the replay's
// workflow code. A refusal names what is wrong and is not retried.
const fork = proxyActivities<ForkActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumAttempts: 3, nonRetryableErrorTypes: ['ForkRefused'] },
});

/**
 * The state a fork of a session at one event starts from, computed on the worker side (a
 * client cannot replay a history: it loads no worker code). Touches no session: the client starts
 * the fork with the answer, whose every field the fork's own input checks judge again.
 */
export async function forkPoint(request: ForkPointRequest): Promise<Required<SessionFork>> {
  return fork.forkPoint(request);
}
