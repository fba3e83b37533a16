import { setTimeout as sleep } from 'node:timers/promises';
import { describeDeployment, setCurrentVersion, type DeploymentVersion, type WorkflowService } from '../release/deployment-api';

/** What a worker's start did to its deployment (see {@link registerVersion}). */
export type VersionRegistration =
  /** Its build is the current version: `made` when this worker made it so (the deployment had none). */
  | { state: 'current'; made: boolean }
  /** Another build is current: this one waits for `agent-sessions release promote <buildId>`. */
  | { state: 'waiting'; current: string; ramping: { buildId: string; percent: number } | null };

/** Thrown when the version does not appear on the server within the time given. */
export class VersionRegistrationError extends Error {
  override readonly name = 'VersionRegistrationError';
}

/**
 * Waits until the server knows `version` (it is created by the worker's first poll), then makes
 * it the current version if the deployment has none; otherwise leaves the current version as it
 * is, so a new build registers and waits for a release. Two workers starting at once cannot both
 * win: the change carries the deployment's conflict token, and the loser reads it again.
 *
 * @throws VersionRegistrationError when the version is not there after `timeoutMs`.
 */
export async function registerVersion(
  service: WorkflowService,
  namespace: string,
  version: DeploymentVersion,
  identity: string,
  timeoutMs = 60_000,
): Promise<VersionRegistration> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deployment = await describeDeployment(service, namespace, version.deploymentName);
    const known = deployment?.versions.some((v) => v.buildId === version.buildId) ?? false;
    if (deployment !== undefined && known) {
      if (deployment.current === version.buildId) return { state: 'current', made: false };
      if (deployment.current !== null) return { state: 'waiting', current: deployment.current, ramping: deployment.ramping };
      try {
        await setCurrentVersion(service, namespace, version, deployment.conflictToken, identity);
        return { state: 'current', made: true };
      } catch (error) {
        // Another worker changed the deployment first: read it again and decide on what it is now.
        if (Date.now() > deadline) throw error;
      }
    } else if (Date.now() > deadline) {
      throw new VersionRegistrationError(
        `build ${version.buildId} of deployment ${version.deploymentName} did not appear on the Temporal server within ${Math.round(timeoutMs / 1000)}s ` +
          'after the worker began polling: check that the server is 1.30.2 or newer with Worker Deployment Versioning enabled (system.enableDeploymentVersions)',
      );
    }
    await sleep(200);
  }
}
