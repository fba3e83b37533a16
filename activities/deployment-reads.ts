import type { WorkflowService } from '@temporalio/client';
import { describeDeployment, type DeploymentState } from '../src/release/deployment-api';

/**
 * Reads a worker deployment for the sessions of one worker, one `DescribeWorkerDeployment` for
 * all that ask at about the same time: `release promote` wakes every session of the old build at
 * once, and each asks where the deployment routes. The server answers that call from the
 * deployment's own workflow, one query at a time, so fifty separate calls took 5 to 8 s each on
 * the dev server and the sessions moved only after `promote` had stopped waiting for them.
 *
 * A caller shares a read only when it began at or after `notBefore` (the time its activity was
 * scheduled, which is after the wake and so after the routing change): it never gets an answer
 * older than the question.
 */
export function sharedDeploymentReads(): (service: WorkflowService, namespace: string, deploymentName: string, notBefore: number) => Promise<DeploymentState | undefined> {
  const inFlight = new Map<string, { startedAt: number; read: Promise<DeploymentState | undefined> }>();
  return (service, namespace, deploymentName, notBefore) => {
    const key = `${namespace}\u0000${deploymentName}`;
    const running = inFlight.get(key);
    if (running !== undefined && running.startedAt >= notBefore) return running.read;
    const entry = { startedAt: Date.now(), read: describeDeployment(service, namespace, deploymentName) };
    inFlight.set(key, entry);
    const forget = (): void => {
      if (inFlight.get(key) === entry) inFlight.delete(key);
    };
    entry.read.then(forget, forget);
    return entry.read;
  };
}
