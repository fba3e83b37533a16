import { isGrpcServiceError } from '@temporalio/client';
import { AgentSessionsError } from './errors';

/** The gRPC status codes this library tells apart. */
export const GRPC = Object.freeze({ CANCELLED: 1, DEADLINE_EXCEEDED: 4, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, UNAVAILABLE: 14 });

/** The gRPC error of an error or of the first error in its cause chain that is one. */
function grpcError(error: unknown): { code: number; details: string; message: string } | undefined {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (isGrpcServiceError(e)) return e;
  }
  return undefined;
}

/** The gRPC status code of an error or of the first error in its cause chain that has one. */
export function grpcCode(error: unknown): number | undefined {
  return grpcError(error)?.code;
}

/** What a {@link withBusyRetry} asks again for, and how often. */
export interface BusyRetryOptions {
  /** How many times in all the call is made. */
  attempts?: number;
  /** Which errors are worth asking again for; {@link isBusy} unless told. */
  retryable?: (error: unknown) => boolean;
  /** Once aborted, no further attempt is made: the last error is thrown. */
  signal?: AbortSignal | undefined;
}

/**
 * Temporal buffers one query per workflow while a workflow task runs, and admits 10 updates in
 * flight per workflow; past that it answers RESOURCE_EXHAUSTED (DESIGN §9). That is a reason to
 * ask again shortly, never an error for the caller: retry with a short, growing, jittered pause
 * (at most a second each). Only for calls that are safe to repeat: queries, and updates that
 * carry their update id.
 */
export async function withBusyRetry<T>(ask: () => Promise<T>, options: BusyRetryOptions = {}): Promise<T> {
  const { attempts = 12, retryable = isBusy, signal } = options;
  const aborted = (): boolean => signal?.aborted === true;
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (error) {
      if (attempt >= attempts || !retryable(error) || aborted()) throw error;
      const pause = Math.min(1000, 25 * 2 ** attempt) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, pause));
      if (aborted()) throw error;
    }
  }
}

/** Whether an error is Temporal's "too many queries / updates in flight" busy answer (RESOURCE_EXHAUSTED). */
export function isBusy(error: unknown): boolean {
  return grpcCode(error) === GRPC.RESOURCE_EXHAUSTED;
}

/**
 * Whether an error is Temporal dropping an update it had admitted but not yet accepted, because
 * it cleared the workflow's update registry (a workflow task failed, as one that continues as new
 * while more writes arrive does). The server says so in these words, with UNAVAILABLE, meaning
 * "send it again": so this is never a server that cannot be reached, and sending the same update
 * id again is safe (applied at most once).
 */
export function isAbortedUpdate(error: unknown): boolean {
  const grpc = grpcError(error);
  if (grpc?.code !== GRPC.UNAVAILABLE) return false;
  // An update sent alone says so in its details; an update-with-start's status is rewritten by the
  // SDK from the failed operation's, which puts the words in the message.
  return [grpc.details, grpc.message].some((text) => text === UPDATE_ABORTED || text.endsWith(`: ${UPDATE_ABORTED}`));
}

/** Temporal's own words for an update dropped with its registry (server `update.AbortedByServerErr`). */
const UPDATE_ABORTED = 'workflow update was aborted';

/**
 * Whether an error is Temporal refusing an update because the workflow's last task failed and
 * its retry has not yet run (FAILED_PRECONDITION, WorkflowNotReadyFailure). A foreign client's
 * update whose rejection is over the payload limit fails a task that way; the next task
 * succeeds. The update was not admitted, so sending it again is safe.
 */
export function isWorkflowNotReady(error: unknown): boolean {
  const grpc = grpcError(error);
  if (grpc?.code !== GRPC.FAILED_PRECONDITION) return false;
  // An update-with-start's status is rewritten by the SDK, which puts the words in the message.
  return [grpc.details, grpc.message].some((text) => text.includes(WORKFLOW_TASK_FAILED));
}

/** Temporal's own words for an update sent while the workflow's task is failing (server `updateworkflow/api.go`, 1.31). */
const WORKFLOW_TASK_FAILED = 'Workflow Task in failed state';

/**
 * Whether an update that carries its update id may be sent again after this error: Temporal was
 * busy ({@link isBusy}), dropped it with the workflow's update registry ({@link isAbortedUpdate}),
 * or waits for a failed workflow task's retry ({@link isWorkflowNotReady}).
 */
export function isResendableUpdateError(error: unknown): boolean {
  return isBusy(error) || isAbortedUpdate(error) || isWorkflowNotReady(error);
}

/**
 * Whether an error means Temporal could not be reached or did not answer in time: the
 * library's {@link TemporalUnavailableError}, or a raw gRPC UNAVAILABLE or DEADLINE_EXCEEDED
 * from a call made on the connection directly.
 */
export function isUnavailable(error: unknown): boolean {
  if (error instanceof AgentSessionsError) return error.code === 'temporal-unavailable';
  const code = grpcCode(error);
  return code === GRPC.UNAVAILABLE || code === GRPC.DEADLINE_EXCEEDED;
}
