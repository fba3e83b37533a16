import { ApplicationFailure } from '@temporalio/workflow';
import type { TodoPolicy } from '../src/todo';

/**
 * Replaced by the worker's bundler (webpack DefinePlugin) with the worker's configured policy.
 * Workflow code cannot read `process.env`, and a policy taken from workflow arguments could be
 * chosen by any client; a constant baked in at bundling is the deployment's own choice.
 */
declare const __AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__: boolean | undefined;

/**
 * The policy of the worker running this code. Only the `todo_write` validator may call this:
 * validators do not run on replay, which is what keeps replay independent of today's policy.
 *
 * @throws ApplicationFailure (type `MissingPolicy`) when the code was bundled without a policy.
 */
export function deploymentPolicy(): TodoPolicy {
  if (typeof __AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__ !== 'boolean') {
    throw ApplicationFailure.create({
      type: 'MissingPolicy',
      nonRetryable: true,
      message:
        'this worker was bundled without allowParallelInProgress; start it through createWorker() ' +
        'or `agent-sessions worker --allow-parallel-in-progress <true|false>`',
    });
  }
  return { allowParallelInProgress: __AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__ };
}
