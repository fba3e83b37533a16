import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { rethrowKnownErrorTypes } from '@temporalio/client/lib/helpers';
import { google, temporal } from '@temporalio/proto';
import { GRPC, isAbortedUpdate, isBusy, isResendableUpdateError, isUnavailable, isWorkflowNotReady, withBusyRetry } from '../../src/client/transient-errors';

const STATUS_NAMES: Record<number, string> = { 5: 'NOT_FOUND', 8: 'RESOURCE_EXHAUSTED', 9: 'FAILED_PRECONDITION', 10: 'ABORTED', 14: 'UNAVAILABLE' };
const NOT_FOUND = 5;
const ABORTED = 10;

/** The error a failed call rejects with, shaped as grpc-js makes it (message, code, details, metadata). */
function grpcFailure(code: number, details: string, binaryDetails?: Uint8Array): Error {
  const metadata = new Map<string, unknown[]>();
  if (binaryDetails !== undefined) metadata.set('grpc-status-details-bin', [Buffer.from(binaryDetails)]);
  return Object.assign(new Error(`${code} ${STATUS_NAMES[code] ?? code}: ${details}`), { code, details, metadata: { get: (key: string) => metadata.get(key) ?? [] } });
}

/**
 * What an update-with-start rejects with when its update was dropped: the server's
 * MultiOperationExecution status (the start aborted, the update UNAVAILABLE), rewritten by the
 * SDK's own code into the update's status, as `executeUpdateWithStart` throws it.
 */
function abortedUpdateWithStart(): unknown {
  return updateWithStartFailure(GRPC.UNAVAILABLE, 'workflow update was aborted', 'MultiOperation could not be executed: Update failed: workflow update was aborted', []);
}

/**
 * What an update-with-start rejects with when the workflow's task is failing: the update's status
 * FAILED_PRECONDITION with a WorkflowNotReadyFailure, as server 1.31 sends it and the SDK rewrites it.
 */
function notReadyUpdateWithStart(): unknown {
  const notReady = { type_url: typeUrl('temporal.api.errordetails.v1.WorkflowNotReadyFailure'), value: temporal.api.errordetails.v1.WorkflowNotReadyFailure.encode({}).finish() };
  return updateWithStartFailure(GRPC.FAILED_PRECONDITION, NOT_READY, 'Update-with-Start could not be executed.', [notReady]);
}

const NOT_READY = 'Unable to perform workflow execution update due to Workflow Task in failed state.';
const typeUrl = (name: string): string => `type.googleapis.com/${name}`;

/** A multi-operation failure (the start aborted, the update failed with `code`), rewritten by the SDK's own code. */
function updateWithStartFailure(code: number, updateMessage: string, message: string, updateDetails: { type_url: string; value: Uint8Array }[]): unknown {
  const failure = temporal.api.errordetails.v1.MultiOperationExecutionFailure.encode({
    statuses: [
      {
        code: ABORTED,
        message: 'Operation was aborted.',
        details: [{ type_url: typeUrl('temporal.api.failure.v1.MultiOperationExecutionAborted'), value: temporal.api.failure.v1.MultiOperationExecutionAborted.encode({}).finish() }],
      },
      { code, message: updateMessage, details: updateDetails },
    ],
  }).finish();
  const status = google.rpc.Status.encode({
    code,
    message,
    details: [{ type_url: typeUrl('temporal.api.errordetails.v1.MultiOperationExecutionFailure'), value: failure }],
  }).finish();
  const raw = grpcFailure(code, message, status);
  try {
    rethrowKnownErrorTypes(raw as never);
  } catch (rewritten) {
    return rewritten;
  }
  assert.fail('the SDK rewrites a multi-operation failure');
}

/** As the SDK hands it on: wrapped, the gRPC error as its cause. */
function wrapped(cause: Error): Error {
  return new Error('the update failed', { cause });
}

const aborted = (): Error => grpcFailure(GRPC.UNAVAILABLE, 'workflow update was aborted');
const unreachable = (): Error => grpcFailure(GRPC.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:7233');
const busy = (): Error => grpcFailure(GRPC.RESOURCE_EXHAUSTED, 'namespace rate limit exceeded');

/** A call that fails with each of `failures` in turn, then answers `'done'`; counts its attempts. */
function failing(...failures: Error[]): { ask: () => Promise<string>; attempts: () => number } {
  let attempts = 0;
  return {
    ask: async () => {
      const failure = failures[attempts++];
      if (failure !== undefined) throw failure;
      return 'done';
    },
    attempts: () => attempts,
  };
}

describe('transient errors', () => {
  test('an update Temporal dropped with its registry is told apart from a server that cannot be reached', () => {
    assert.equal(isAbortedUpdate(aborted()), true);
    assert.equal(isAbortedUpdate(wrapped(aborted())), true, 'found in the cause chain');
    const withStart = abortedUpdateWithStart();
    assert.equal(isAbortedUpdate(withStart), true, `an update-with-start's dropped update, as the SDK throws it: ${String(withStart)}`);
    assert.equal(isAbortedUpdate(unreachable()), false, 'UNAVAILABLE alone is not an aborted update');
    assert.equal(isAbortedUpdate(grpcFailure(NOT_FOUND, 'workflow update was aborted by closing workflow')), false, 'a closed workflow is final');
    assert.equal(isAbortedUpdate(new Error('workflow update was aborted')), false, 'only a gRPC status says so');
    assert.equal(isUnavailable(unreachable()), true);
    assert.equal(isBusy(wrapped(busy())), true);
  });

  test('an update refused while the workflow task is failing may be sent again; other FAILED_PRECONDITIONs may not', () => {
    const withStart = notReadyUpdateWithStart();
    assert.equal(isWorkflowNotReady(withStart), true, `an update-with-start refused as not ready, as the SDK throws it: ${String(withStart)}`);
    assert.equal(isWorkflowNotReady(wrapped(grpcFailure(GRPC.FAILED_PRECONDITION, NOT_READY))), true, 'an update sent alone, in the cause chain');
    assert.equal(isResendableUpdateError(withStart), true);
    assert.equal(isWorkflowNotReady(grpcFailure(GRPC.FAILED_PRECONDITION, 'Namespace is not active')), false);
    assert.equal(isWorkflowNotReady(grpcFailure(GRPC.UNAVAILABLE, NOT_READY)), false, 'only FAILED_PRECONDITION says so');
    assert.equal(isResendableUpdateError(unreachable()), false);
  });

  test('busy answers are asked again, other errors are thrown at once', async () => {
    const call = failing(busy(), busy());
    assert.equal(await withBusyRetry(call.ask), 'done');
    assert.equal(call.attempts(), 3);
    const refused = failing(aborted());
    await assert.rejects(withBusyRetry(refused.ask), (error: unknown) => isAbortedUpdate(error));
    assert.equal(refused.attempts(), 1, 'an aborted update is not resent unless the caller says it may be');
  });

  test('aborted updates are resent when the caller says so, and a server that cannot be reached is still told at once', async () => {
    const retryable = (error: unknown): boolean => isBusy(error) || isAbortedUpdate(error);
    const call = failing(aborted(), busy(), aborted());
    assert.equal(await withBusyRetry(call.ask, { retryable }), 'done');
    assert.equal(call.attempts(), 4);
    const gone = failing(aborted(), unreachable());
    await assert.rejects(withBusyRetry(gone.ask, { retryable }), (error: unknown) => isUnavailable(error) && !isAbortedUpdate(error));
    assert.equal(gone.attempts(), 2);
  });

  test('attempts bound the resending, and the last error is the one thrown', async () => {
    const call = failing(busy(), busy(), busy(), busy());
    await assert.rejects(withBusyRetry(call.ask, { attempts: 3 }), (error: unknown) => isBusy(error));
    assert.equal(call.attempts(), 3);
  });

  test('once the signal is aborted no further attempt is made, even mid-pause', async () => {
    const before = new AbortController();
    before.abort();
    const first = failing(busy());
    await assert.rejects(withBusyRetry(first.ask, { signal: before.signal }), (error: unknown) => isBusy(error));
    assert.equal(first.attempts(), 1);

    const during = new AbortController();
    const second = failing(busy(), busy(), busy());
    const answer = withBusyRetry(second.ask, { signal: during.signal });
    setTimeout(() => during.abort(), 5); // within the first pause (25-50 ms)
    await assert.rejects(answer, (error: unknown) => isBusy(error));
    assert.equal(second.attempts(), 1);
  });
});
