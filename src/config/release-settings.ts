import { InvalidSettingError } from '../client/errors';
import { nonEmpty } from './setting-values';

/** Which Worker Deployment Version a worker serves, and which deployment `release` changes. */
export interface ReleaseSettings {
  /** `--deployment` / `AGENT_SESSIONS_DEPLOYMENT`; defaults to the task queue's name (`agent-sessions`). */
  deployment: string;
  /** `--build-id` / `AGENT_SESSIONS_BUILD_ID`; absent: the worker computes it from its code. */
  buildId?: string;
}

/** A deployment name or build id: up to 200 characters, none of them a space (the controller's deployment names hold a `/`). */
const NAME = /^\S{1,200}$/;

/**
 * Reads the release settings; a flag wins over its variable.
 *
 * @throws InvalidSettingError naming the flag or variable whose value Temporal would refuse.
 */
export function releaseSettingsFromEnv(env: NodeJS.ProcessEnv, taskQueue: string, flags: { deployment?: string; buildId?: string } = {}): ReleaseSettings {
  // The Temporal Worker Controller on Kubernetes gives each pod TEMPORAL_DEPLOYMENT_NAME and
  // TEMPORAL_WORKER_BUILD_ID: used when ours are not set, so a worker it runs serves its version.
  const deployment =
    checked('--deployment', flags.deployment) ??
    checked('AGENT_SESSIONS_DEPLOYMENT', nonEmpty(env.AGENT_SESSIONS_DEPLOYMENT)) ??
    checked('TEMPORAL_DEPLOYMENT_NAME', nonEmpty(env.TEMPORAL_DEPLOYMENT_NAME)) ??
    taskQueue;
  const buildId =
    checked('--build-id', flags.buildId) ??
    checked('AGENT_SESSIONS_BUILD_ID', nonEmpty(env.AGENT_SESSIONS_BUILD_ID)) ??
    checked('TEMPORAL_WORKER_BUILD_ID', nonEmpty(env.TEMPORAL_WORKER_BUILD_ID));
  return { deployment, ...(buildId !== undefined ? { buildId } : {}) };
}

function checked(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!NAME.test(value)) throw new InvalidSettingError(`${name} must be 1 to 200 characters with no space, got ${JSON.stringify(value.slice(0, 80))}`);
  return value;
}
