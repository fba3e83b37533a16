import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Connection } from '@temporalio/client';
import { CONNECTION_CLOSED, connectionInterceptors } from '../../src/client/closed-connection';
import { grpcCode, GRPC } from '../../src/client/transient-errors';
import { findFreePort } from '../../src/devserver';

/** What a promise came to within `ms`: its value or error, or `pending`. */
async function within(ms: number, promise: Promise<unknown>): Promise<{ value: unknown } | { error: unknown } | 'pending'> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'pending'>((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
  try {
    return await Promise.race([promise.then((value) => ({ value }), (error: unknown) => ({ error })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// Nothing listens on the port: every attempt fails at once with UNAVAILABLE, which the SDK's
// retry interceptor retries after a pause (at least 400 ms here) from a timer.
test('a call waiting to retry when its connection closes ends with CANCELLED, and nothing is thrown from the retry timer', async () => {
  const uncaught: unknown[] = [];
  const record = (error: unknown): void => void uncaught.push(error);
  process.on('uncaughtException', record);
  try {
    const connection = Connection.lazy({ address: `127.0.0.1:${await findFreePort()}`, interceptors: connectionInterceptors({ initialIntervalMs: () => 400, maxAttempts: 5 }) });
    const call = connection.workflowService.getSystemInfo({});
    await new Promise((resolve) => setTimeout(resolve, 150)); // the first attempt has failed; the next waits on its timer
    await connection.close();
    const outcome = await within(3_000, call);
    assert.notEqual(outcome, 'pending', 'the call settles once its next attempt finds the connection closed');
    assert.ok(typeof outcome === 'object' && 'error' in outcome, 'the call fails');
    assert.equal(grpcCode(outcome.error), GRPC.CANCELLED);
    assert.match(String((outcome.error as Error).message), new RegExp(CONNECTION_CLOSED));
    assert.deepEqual(uncaught, [], 'no exception escaped from a timer');

    const late = await within(3_000, connection.workflowService.getSystemInfo({}));
    assert.ok(typeof late === 'object' && 'error' in late, 'a call made after the close fails too');
    assert.equal(grpcCode(late.error), GRPC.CANCELLED, String((late as { error: unknown }).error));
  } finally {
    process.off('uncaughtException', record);
  }
});
