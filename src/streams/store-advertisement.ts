import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { StreamStoreError, type StreamStoreIdentity } from './stream-store';

type WorkflowService = temporal.api.workflowservice.v1.WorkflowService;

/** The key of a Worker Deployment Version's metadata under which its workers name their stream store. */
export const STREAM_STORE_METADATA_KEY = 'agent-sessions.stream-store';

/**
 * Records on the worker's Worker Deployment Version which stream store its model calls write to,
 * so an HTTP service can check that it reads the same one ({@link assertSameStreamStore}). Every
 * worker of a build is started with the same settings; the last one to start says it.
 */
export async function advertiseStreamStore(
  service: WorkflowService,
  namespace: string,
  version: { deploymentName: string; buildId: string },
  store: StreamStoreIdentity,
  identity: string,
): Promise<void> {
  await service.updateWorkerDeploymentVersionMetadata({
    namespace,
    deploymentVersion: { deploymentName: version.deploymentName, buildId: version.buildId },
    upsertEntries: { [STREAM_STORE_METADATA_KEY]: defaultPayloadConverter.toPayload(store) },
    identity,
  });
}

/** The stream store the current version of `deploymentName` writes to, if its workers said (undefined: no current version, or an older build that does not say). */
export async function advertisedStreamStore(service: WorkflowService, namespace: string, deploymentName: string): Promise<{ buildId: string; store: StreamStoreIdentity } | undefined> {
  let buildId: string | undefined;
  try {
    const deployment = await service.describeWorkerDeployment({ namespace, deploymentName });
    buildId = deployment.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId ?? undefined;
  } catch {
    return undefined;
  }
  if (buildId === undefined || buildId === '') return undefined;
  const described = await service.describeWorkerDeploymentVersion({ namespace, deploymentVersion: { deploymentName, buildId } });
  const payload = described.workerDeploymentVersionInfo?.metadata?.entries?.[STREAM_STORE_METADATA_KEY];
  if (payload === undefined || payload === null) return undefined;
  const store = defaultPayloadConverter.fromPayload<StreamStoreIdentity>(payload as Parameters<typeof defaultPayloadConverter.fromPayload>[0]);
  return typeof store?.id === 'string' ? { buildId, store } : undefined;
}

/**
 * Checks that the workers of deployment `deploymentName` write to the stream store `mine` reads:
 * a reader of another store would wait for words that never come.
 *
 * @throws StreamStoreError (`stream-store-mismatch`) naming both stores and the setting to fix.
 */
export async function assertSameStreamStore(service: WorkflowService, namespace: string, deploymentName: string, mine: StreamStoreIdentity): Promise<void> {
  const theirs = await advertisedStreamStore(service, namespace, deploymentName);
  if (theirs === undefined || theirs.store.id === mine.id) return;
  throw new StreamStoreError(
    'stream-store-mismatch',
    `the workers of deployment ${deploymentName} (build ${theirs.buildId}) write the model's words to the stream store ${theirs.store.location}, ` +
      `but this process reads ${mine.location}, another store: set AGENT_SESSIONS_STREAM_STORE to the same store for the workers and the HTTP service`,
  );
}
