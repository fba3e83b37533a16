import { temporal } from '@temporalio/proto';

/** Temporal's `WorkflowService`, as both `Connection` and `NativeConnection` expose it. */
export type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;

/** gRPC's NOT_FOUND status code. */
const GRPC_NOT_FOUND = 5;

/** A Worker Deployment Version: the deployment and the build. */
export interface DeploymentVersion {
  deploymentName: string;
  buildId: string;
}

/** What the server says of one version of a deployment. */
export interface VersionSummary {
  buildId: string;
  /** `current`, `ramping`, `draining`, `drained` or `inactive`, as Temporal reports it. */
  status: VersionStatus;
  /** When it was last the current version, if ever (what `release rollback` goes back to). */
  lastCurrentAt: Date | null;
  createdAt: Date | null;
}

/** The states Temporal reports for a version (`WorkerDeploymentVersionStatus`, lower-cased). */
export type VersionStatus = 'current' | 'ramping' | 'draining' | 'drained' | 'inactive' | 'unspecified';

/** A deployment as {@link describeDeployment} reads it. */
export interface DeploymentState {
  name: string;
  /** The current version's build id, or `null` while unversioned workers get the new workflows. */
  current: string | null;
  ramping: { buildId: string; percent: number } | null;
  versions: VersionSummary[];
  /** `false` while a routing change is still reaching the task queues (sessions woken then would not see it). */
  routingSettled: boolean;
  /** Passed back to a change, so two operators cannot change it at once without one noticing. */
  conflictToken: Uint8Array | null;
}

const VERSION_STATUS: Record<number, VersionStatus> = {
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT]: 'current',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING]: 'ramping',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING]: 'draining',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED]: 'drained',
  [temporal.api.enums.v1.WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE]: 'inactive',
};

/** The deployment as the server has it, or `undefined` when no worker of it has polled yet. */
export async function describeDeployment(service: WorkflowService, namespace: string, deploymentName: string): Promise<DeploymentState | undefined> {
  let response: temporal.api.workflowservice.v1.DescribeWorkerDeploymentResponse;
  try {
    response = await service.describeWorkerDeployment({ namespace, deploymentName });
  } catch (error) {
    if (isGrpcCode(error, GRPC_NOT_FOUND)) return undefined;
    throw error;
  }
  const info = response.workerDeploymentInfo;
  const routing = info?.routingConfig;
  const current = routing?.currentDeploymentVersion?.buildId || null;
  const rampingId = routing?.rampingDeploymentVersion?.buildId || null;
  return {
    name: deploymentName,
    current,
    ramping: rampingId !== null ? { buildId: rampingId, percent: routing?.rampingVersionPercentage ?? 0 } : null,
    versions: (info?.versionSummaries ?? []).map((summary) => ({
      buildId: summary.deploymentVersion?.buildId ?? '',
      status: VERSION_STATUS[summary.status ?? 0] ?? 'unspecified',
      lastCurrentAt: timestamp(summary.lastCurrentTime) ?? timestamp(summary.currentSinceTime),
      createdAt: timestamp(summary.createTime),
    })),
    routingSettled: info?.routingConfigUpdateState !== temporal.api.enums.v1.RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS,
    conflictToken: response.conflictToken && response.conflictToken.length > 0 ? response.conflictToken : null,
  };
}

/** Makes `buildId` the current version. */
export async function setCurrentVersion(service: WorkflowService, namespace: string, version: DeploymentVersion, conflictToken: Uint8Array | null, identity: string): Promise<void> {
  await service.setWorkerDeploymentCurrentVersion({
    namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    identity,
    ...(conflictToken !== null ? { conflictToken } : {}),
  });
}

/** Makes `buildId` the ramping version at `percent` percent of new workflow starts and moves. */
export async function setRampingVersion(
  service: WorkflowService,
  namespace: string,
  version: DeploymentVersion,
  percent: number,
  conflictToken: Uint8Array | null,
  identity: string,
): Promise<void> {
  await service.setWorkerDeploymentRampingVersion({
    namespace,
    deploymentName: version.deploymentName,
    buildId: version.buildId,
    percentage: percent,
    identity,
    ...(conflictToken !== null ? { conflictToken } : {}),
  });
}

/** Whether `error` is a gRPC error with `code`. */
export function isGrpcCode(error: unknown, code: number): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

function timestamp(value: temporal.api.deployment.v1.WorkerDeploymentInfo.IWorkerDeploymentVersionSummary['createTime']): Date | null {
  if (value === null || value === undefined || value.seconds === null || value.seconds === undefined) return null;
  const seconds = typeof value.seconds === 'number' ? value.seconds : Number(value.seconds.toString());
  if (seconds === 0 && !value.nanos) return null;
  return new Date(seconds * 1000 + Math.floor((value.nanos ?? 0) / 1e6));
}
