import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { AgentSessionsError } from '../client/errors';
import type { CarriedRefusal, CarriedSample } from '../session/carried-check';
import { carriedQuery, RELEASE_CHECK_WORKFLOW_TYPE, SESSION_WORKFLOW_TYPE, sessionWakeSignal } from '../../workflows/messages';
import {
  describeDeployment,
  setCurrentVersion,
  setRampingVersion,
  type DeploymentState,
  type DeploymentVersion,
  type VersionStatus,
} from './deployment-api';

/** Where a release happens: a Temporal client, and the deployment and task queue of the sessions. */
export interface ReleaseTarget {
  client: Client;
  namespace: string;
  /** The Worker Deployment's name (`agent-sessions` unless configured otherwise). */
  deploymentName: string;
  /** The task queue its workers poll: pollers are counted there and the check runs there. */
  taskQueue: string;
  /** Who makes the change, as Temporal records it. Defaults to `agent-sessions release`. */
  identity?: string;
}

/** One version of the deployment, as `release status` shows it. */
export interface ReleaseVersion {
  buildId: string;
  /** As Temporal reports it: `current`, `ramping`, `draining`, `drained` or `inactive`. */
  status: VersionStatus;
  /** Workers of this build that polled the task queue recently. */
  pollers: number;
  /** Running sessions pinned to this build, counted from visibility. */
  openSessions: number;
}

/** `release status --json`. */
export interface ReleaseStatus {
  deployment: string;
  current: string | null;
  ramping: { buildId: string; percent: number } | null;
  versions: ReleaseVersion[];
}

/** What `release promote` (and `rollback`) did. */
export interface PromoteResult {
  deployment: string;
  buildId: string;
  /** The current version before, `null` when there was none. */
  previous: string | null;
  /** `current`, or `ramping` with the percentage. */
  mode: { kind: 'current' } | { kind: 'ramping'; percent: number };
  /** How many open sessions of the old builds had their carried state checked by the new build. */
  checked: number;
  /** Open sessions of other builds woken so they move at once. */
  woken: number;
  /** Of those, how many were on the new build when the wait ended. */
  moved: number;
  /** Woken sessions still on their old build: in a turn (they move when it ends), or not targeted by a ramp. */
  remaining: number;
}

/** Options of {@link promoteRelease}. */
export interface PromoteOptions {
  /** Ramp instead of making it current: the share of sessions (and new sessions) that go to it, 0-100. */
  rampPercent?: number;
  /** How many open sessions of the current build are checked. Defaults to 20. */
  sample?: number;
  /** How long to wait for the woken sessions to move. Defaults to 60 seconds. */
  moveTimeoutMs?: number;
  /** Told each step as it happens, for a person watching. */
  progress?: (line: string) => void;
}

/** Thrown when a release cannot be made: the message says what to fix; nothing was changed. */
export class ReleaseRefusedError extends AgentSessionsError {
  override readonly name = 'ReleaseRefusedError';
  /** The sessions whose carried state the new build refused, with the rule and its message. */
  readonly refusals: readonly CarriedRefusal[];

  constructor(message: string, refusals: readonly CarriedRefusal[] = []) {
    super('release-refused', message);
    this.refusals = refusals;
  }
}

const DEFAULT_SAMPLE = 20;
/** Largest JSON size of the samples sent to one check workflow (Temporal's payload limit is 2 MB). */
const CHECK_BATCH_BYTES = 512 * 1024;
const WAKE_CONCURRENCY = 32;

/** The deployment, its versions with their pollers and open sessions. */
export async function releaseStatus(target: ReleaseTarget): Promise<ReleaseStatus> {
  const deployment = await describeDeployment(target.client.workflowService, target.namespace, target.deploymentName);
  if (deployment === undefined) return { deployment: target.deploymentName, current: null, ramping: null, versions: [] };
  const pollers = await pollersByBuild(target);
  const versions = await Promise.all(
    deployment.versions.map(async (version) => ({
      buildId: version.buildId,
      status: version.status,
      pollers: pollers.get(version.buildId) ?? 0,
      openSessions: await countSessions(target, `TemporalWorkerDeploymentVersion = '${versionString(target.deploymentName, version.buildId)}'`),
    })),
  );
  return { deployment: target.deploymentName, current: deployment.current, ramping: deployment.ramping, versions };
}

/**
 * Makes `buildId` the current (or ramping) version of the deployment, after checking that it has
 * workers and that it accepts the carried state of a sample of the current build's open sessions
 * (their `session/carried` input run through `buildId`'s own checks, by a check workflow pinned
 * to it). Then wakes every open session of the other builds, so the idle ones continue as new
 * onto it now; a session in a turn finishes it on its build and moves when it ends.
 *
 * @throws ReleaseRefusedError the build is unknown or has no workers, a sampled session was
 *   refused (naming it and the rule), or the ramp is out of range; nothing was changed.
 */
export async function promoteRelease(target: ReleaseTarget, buildId: string, options: PromoteOptions = {}): Promise<PromoteResult> {
  const progress = options.progress ?? (() => undefined);
  const ramp = options.rampPercent;
  if (ramp !== undefined && (!Number.isFinite(ramp) || ramp < 0 || ramp > 100)) {
    throw new ReleaseRefusedError(`--ramp must be a percentage from 0 to 100, got ${ramp}`);
  }
  const service = target.client.workflowService;
  const deployment = await describeDeployment(service, target.namespace, target.deploymentName);
  if (deployment === undefined) {
    throw new ReleaseRefusedError(`deployment ${target.deploymentName} does not exist in namespace ${target.namespace}: start a worker of it first (agent-sessions worker)`);
  }
  if (!deployment.versions.some((v) => v.buildId === buildId)) {
    throw new ReleaseRefusedError(
      `build ${buildId} is not a version of deployment ${target.deploymentName} (its versions: ${deployment.versions.map((v) => v.buildId).join(', ') || 'none'}): ` +
        'start a worker of that build first (agent-sessions worker prints its build id)',
    );
  }
  // The server lists the pollers of one partition of the task queue, which a worker reaches in
  // turn with the others: a worker that polls shows up within seconds.
  let pollers = 0;
  for (const deadline = Date.now() + 15_000; pollers === 0 && Date.now() < deadline; ) {
    pollers = (await pollersByBuild(target)).get(buildId) ?? 0;
    if (pollers === 0) await sleep(500);
  }
  if (pollers === 0) {
    throw new ReleaseRefusedError(`no worker of build ${buildId} polls task queue ${target.taskQueue}: start one before promoting it, or sessions moved to it would wait`);
  }

  const checked = deployment.current !== null && deployment.current !== buildId ? await checkCarried(target, deployment.current, buildId, options.sample ?? DEFAULT_SAMPLE) : 0;
  if (checked > 0) progress(`build ${buildId} accepts the carried state of ${checked} open session${checked === 1 ? '' : 's'} of build ${deployment.current}`);

  await changeRouting(target, deployment, buildId, ramp);
  await untilRoutingSettled(target);
  progress(ramp !== undefined ? `build ${buildId} ramps at ${ramp}%` : `build ${buildId} is the current version of ${target.deploymentName}`);

  const onOthers = `TemporalWorkerDeployment = '${target.deploymentName}' AND TemporalWorkerDeploymentVersion != '${versionString(target.deploymentName, buildId)}'`;
  const woken = await wakeSessions(target, onOthers);
  const { remaining } = woken > 0 ? await untilMoved(target, onOthers, woken, options.moveTimeoutMs ?? 60_000) : { remaining: 0 };
  return {
    deployment: target.deploymentName,
    buildId,
    previous: deployment.current,
    mode: ramp !== undefined ? { kind: 'ramping', percent: ramp } : { kind: 'current' },
    checked,
    woken,
    moved: woken - remaining,
    remaining,
  };
}

/**
 * Makes the version that was current before the current one current again, by the same path as
 * {@link promoteRelease} (its workers and its acceptance of the carried state are checked first).
 *
 * @throws ReleaseRefusedError there is no earlier version, or the promotion is refused.
 */
export async function rollbackRelease(target: ReleaseTarget, options: Omit<PromoteOptions, 'rampPercent'> = {}): Promise<PromoteResult> {
  const deployment = await describeDeployment(target.client.workflowService, target.namespace, target.deploymentName);
  const previous = deployment?.versions
    .filter((v) => v.buildId !== deployment.current && v.lastCurrentAt !== null)
    .sort((a, b) => b.lastCurrentAt!.getTime() - a.lastCurrentAt!.getTime())[0];
  if (deployment === undefined || previous === undefined) {
    throw new ReleaseRefusedError(`deployment ${target.deploymentName} has no earlier current version to roll back to (current: ${deployment?.current ?? 'none'})`);
  }
  return promoteRelease(target, previous.buildId, options);
}

/** `deployment:buildId`, as visibility's `TemporalWorkerDeploymentVersion` holds it. */
function versionString(deploymentName: string, buildId: string): string {
  return `${deploymentName}:${buildId}`;
}

async function pollersByBuild(target: ReleaseTarget): Promise<Map<string, number>> {
  const response = await target.client.workflowService.describeTaskQueue({
    namespace: target.namespace,
    taskQueue: { name: target.taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const counts = new Map<string, number>();
  for (const poller of response.pollers ?? []) {
    const options = poller.deploymentOptions;
    if (options?.deploymentName !== target.deploymentName || !options.buildId) continue;
    counts.set(options.buildId, (counts.get(options.buildId) ?? 0) + 1);
  }
  return counts;
}

function sessionQuery(filter: string): string {
  return `WorkflowType = '${SESSION_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND ${filter}`;
}

async function countSessions(target: ReleaseTarget, filter: string): Promise<number> {
  const { count } = await target.client.workflow.count(sessionQuery(filter));
  return count;
}

/** Runs `buildId`'s carried-state checks on up to `sample` open sessions of build `from`; returns how many were checked. */
async function checkCarried(target: ReleaseTarget, from: string, buildId: string, sample: number): Promise<number> {
  const samples: CarriedSample[] = [];
  for await (const execution of target.client.workflow.list({ query: sessionQuery(`TemporalWorkerDeploymentVersion = '${versionString(target.deploymentName, from)}'`), pageSize: sample })) {
    if (samples.length >= sample) break;
    let input: unknown;
    try {
      input = await target.client.workflow.getHandle(execution.workflowId, execution.runId).query(carriedQuery);
    } catch {
      continue; // Closed meanwhile, or busy: another one stands in for it.
    }
    samples.push({ sessionId: execution.workflowId, ...(execution.parentExecution?.workflowId ? { parentWorkflowId: execution.parentExecution.workflowId } : {}), input });
  }
  const refusals: CarriedRefusal[] = [];
  for (const batch of batches(samples)) {
    const found = await target.client.workflow.execute(RELEASE_CHECK_WORKFLOW_TYPE, {
      taskQueue: target.taskQueue,
      workflowId: `~release-check-${randomUUID()}`,
      args: [batch],
      versioningOverride: { pinnedTo: { deploymentName: target.deploymentName, buildId } },
      workflowExecutionTimeout: '2 minutes',
    });
    refusals.push(...(found as CarriedRefusal[]));
  }
  if (refusals.length > 0) {
    const first = refusals[0]!;
    throw new ReleaseRefusedError(
      `build ${buildId} refuses the carried state of ${refusals.length} of ${samples.length} sampled session${samples.length === 1 ? '' : 's'} of build ${from}; ` +
        `nothing was changed. First: session ${first.sessionId}, rule ${first.rule}: ${first.message}`,
      refusals,
    );
  }
  return samples.length;
}

function* batches(samples: CarriedSample[]): Generator<CarriedSample[]> {
  let batch: CarriedSample[] = [];
  let bytes = 0;
  for (const sample of samples) {
    const size = JSON.stringify(sample).length;
    if (batch.length > 0 && bytes + size > CHECK_BATCH_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(sample);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

async function changeRouting(target: ReleaseTarget, deployment: DeploymentState, buildId: string, ramp: number | undefined): Promise<void> {
  const version: DeploymentVersion = { deploymentName: target.deploymentName, buildId };
  const identity = target.identity ?? 'agent-sessions release';
  try {
    if (ramp !== undefined) await setRampingVersion(target.client.workflowService, target.namespace, version, ramp, deployment.conflictToken, identity);
    else if (deployment.current !== buildId || deployment.ramping !== null) {
      await setCurrentVersion(target.client.workflowService, target.namespace, version, deployment.conflictToken, identity);
    }
  } catch (error) {
    throw new ReleaseRefusedError(
      `Temporal refused to make build ${buildId} ${ramp !== undefined ? `ramp at ${ramp}%` : 'current'}: ${(error as Error).message}. ` +
        'If another release changed the deployment meanwhile, read `agent-sessions release status` and try again.',
    );
  }
}

/** Waits (up to 30 s) until the routing change has reached every task queue of the deployment. */
async function untilRoutingSettled(target: ReleaseTarget): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const deployment = await describeDeployment(target.client.workflowService, target.namespace, target.deploymentName);
    if (deployment?.routingSettled !== false) return;
    await sleep(100);
  }
}

/** Signals `session/wake` to every open session matching `filter`; returns how many. */
async function wakeSessions(target: ReleaseTarget, filter: string): Promise<number> {
  const ids: string[] = [];
  for await (const execution of target.client.workflow.list({ query: sessionQuery(filter), pageSize: 1000 })) ids.push(execution.workflowId);
  let next = 0;
  let woken = 0;
  const wake = async (): Promise<void> => {
    while (next < ids.length) {
      const id = ids[next++]!;
      try {
        await target.client.workflow.getHandle(id).signal(sessionWakeSignal, { reason: 'release' });
        woken++;
      } catch {
        // Closed since it was listed: nothing to move.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(WAKE_CONCURRENCY, ids.length) }, wake));
  return woken;
}

/**
 * Waits until no session matching `filter` is left, or none has moved for five seconds once one
 * has (those left are in a turn, or not targeted by a ramp), or none at all in the first 20
 * seconds, or `timeoutMs`. A woken session takes three workflow tasks and an activity to move: on
 * a loaded 2-core machine the first took 8.5 s, so five quiet seconds from the wake said nothing.
 */
async function untilMoved(target: ReleaseTarget, filter: string, woken: number, timeoutMs: number): Promise<{ remaining: number }> {
  const deadline = Date.now() + timeoutMs;
  let remaining = woken;
  let lastChange = Date.now();
  let anyMoved = false;
  for (;;) {
    const now = Math.min(woken, await countSessions(target, filter));
    if (now < remaining) {
      lastChange = Date.now();
      anyMoved = true;
    }
    remaining = now;
    if (remaining === 0 || Date.now() - lastChange > (anyMoved ? 5_000 : 20_000) || Date.now() > deadline) return { remaining };
    await sleep(250);
  }
}
