import { Context } from '@temporalio/activity';
import type { WorkflowBundle } from '@temporalio/worker';
import { forkPointOf } from '../src/worker/fork-point';
import { bundleSessionWorkflows } from '../src/worker/workflow-bundle';
import type { TodoPolicy } from '../src/todo';
import type { ForkActivities } from './fork-contract';

/** Options of {@link createForkActivities}. */
export interface ForkActivitiesOptions {
  /** The worker's policy: the replay's bundle is built under it (replay itself does not read it). */
  policy: TodoPolicy;
  /** The per-user cache folder for workflow bundles (default: `~/.cache/agent-sessions`). */
  cacheDir?: string;
}

/**
 * The fork's activities (see `fork-contract.ts`), on the worker's own connection. The replay
 * bundle (the session workflows plus the fork capture's interceptor) is built on the first fork
 * and cached like the worker's own.
 */
export function createForkActivities(options: ForkActivitiesOptions): ForkActivities {
  const bundle = (): Promise<WorkflowBundle> =>
    bundleSessionWorkflows(options.policy, { forkCapture: true, ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}) });
  return {
    async forkPoint(request) {
      return forkPointOf(Context.current().client, request, bundle);
    },
  };
}
