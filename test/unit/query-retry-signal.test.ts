/**
 * A query that Temporal answers "busy" is asked again, but never past the call: once the
 * caller's abort signal fires, no further attempt is made and no pause is waited out.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { test } from 'node:test';
import type { Client } from '@temporalio/client';
import { SessionClient } from '../../src/client';
import { GRPC } from '../../src/client/transient-errors';

/** A Temporal client whose every query is answered RESOURCE_EXHAUSTED, counting the attempts. */
function alwaysBusy(): { temporal: Client; attempts: () => number } {
  const storage = new AsyncLocalStorage<{ abortSignal?: AbortSignal }>();
  let attempts = 0;
  const busy = (): Error => Object.assign(new Error('8 RESOURCE_EXHAUSTED: too many outstanding queries'), { code: GRPC.RESOURCE_EXHAUSTED, details: 'too many outstanding queries', metadata: { get: () => [] } });
  const connection = {
    options: { address: 'stub' },
    callContextStorage: storage,
    withAbortSignal: <R>(abortSignal: AbortSignal, fn: () => Promise<R>): Promise<R> => storage.run({ abortSignal }, fn),
  };
  const workflow = {
    getHandle: () => ({
      query: async () => {
        attempts++;
        throw busy();
      },
    }),
  };
  return { temporal: { connection, workflow } as unknown as Client, attempts: () => attempts };
}

test('busy answers to a query stop being retried once the caller aborts the call', async () => {
  const { temporal, attempts } = alwaysBusy();
  const client = new SessionClient(temporal, { diagnoseAfterMs: 60_000 });
  const caller = new AbortController();
  const asked = temporal.connection.withAbortSignal(caller.signal, () => client.todos('busy-session'));
  const settled = asked.then(
    () => 'answered',
    () => 'failed',
  );
  // Let the first attempts fail, then abort while the retry pauses.
  await new Promise((resolve) => setTimeout(resolve, 120));
  caller.abort(new Error('the caller gave up'));
  const attemptsAtAbort = attempts();
  assert.equal(await settled, 'failed');
  // Had the retry ignored the signal it would go on for seconds, up to its 12 attempts.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.ok(attempts() <= attemptsAtAbort + 1, `${attempts()} attempts in all, ${attemptsAtAbort} when the call was aborted`);
  assert.ok(attempts() < 12);
});
