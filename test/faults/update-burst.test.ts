import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type GrpcRetryOptions } from '@temporalio/client';
import { SessionClient } from '../../src/client';
import { temporalAddress, uniqueId } from '../helpers';
import { killStrays, LONG_TESTS, recordedWrite, startWorkerProcess, verifyWrites, writeTodos, type WriteOutcome } from './fault-helpers';

const CLIENTS = 20;
const WRITES_PER_CLIENT = 50; // 1,000 writes to one session
const WRITE_TIMEOUT_MS = 120_000;
const RESOURCE_EXHAUSTED = 8;
const SLOW = 'takes 20–50 s on a 2-core machine (1,000 writes through one workflow): set AGENT_SESSIONS_LONG_TESTS=1 (npm test in CI does)';

const clients: SessionClient[] = [];

after(async () => {
  await Promise.all(clients.map((client) => client.closeConnection()));
  await killStrays();
});

/** What the gRPC layer under the clients saw: every attempt's status, before any retry. */
const grpcSeen = { attempts: 0, resourceExhausted: 0, surfacedResourceExhausted: 0, otherFailures: new Map<string, number>(), messages: new Set<string>() };

/**
 * A client built exactly as `SessionClient.connect` builds one (a connection with the SDK's
 * default gRPC retry interceptor), except that the retry decision is observed: it sees each
 * attempt's status, so the test can say how often Temporal answered RESOURCE_EXHAUSTED and
 * whether the SDK gave up on one.
 */
async function observedClient(address: string, taskQueue: string): Promise<SessionClient> {
  const base = defaultGrpcRetryOptions();
  const observed: GrpcRetryOptions = {
    delayFunction: (attempt, status) => base.delayFunction(attempt, status),
    retryableDecider(attempt, status) {
      const retry = base.retryableDecider(attempt, status);
      if (status.code !== 0) {
        grpcSeen.attempts++;
        if (status.code === RESOURCE_EXHAUSTED) {
          grpcSeen.resourceExhausted++;
          grpcSeen.messages.add(status.details);
          if (!retry) grpcSeen.surfacedResourceExhausted++;
        } else {
          const key = `${status.code}: ${status.details.slice(0, 120)}`;
          grpcSeen.otherFailures.set(key, (grpcSeen.otherFailures.get(key) ?? 0) + 1);
        }
      } else {
        grpcSeen.attempts++;
      }
      return retry;
    },
  };
  const connection = await Connection.connect({ address, interceptors: [makeGrpcRetryInterceptor(observed)] });
  return new SessionClient(new Client({ connection, namespace: 'default' }), { taskQueue }, true);
}

test('1,000 writes to one session from 20 concurrent clients all land: no resource-exhausted error reaches a caller, the list is the last accepted write, history holds every accepted write once in acceptance order', { timeout: 180_000, skip: !LONG_TESTS && SLOW }, async (t) => {
  const taskQueue = uniqueId('faults-burst');
  const address = await temporalAddress();
  const workerProcess = await startWorkerProcess(address, taskQueue);
  for (let n = 0; n < CLIENTS; n++) clients.push(await observedClient(address, taskQueue));
  const session = uniqueId('burst');

  const started = Date.now();
  const outcomes: WriteOutcome[] = [];
  await Promise.all(
    clients.map(async (client, writer) => {
      for (let i = 0; i < WRITES_PER_CLIENT; i++) {
        outcomes.push(await recordedWrite(client, session, writeTodos(writer, i), `${session}:${writer}:${i}`, WRITE_TIMEOUT_MS));
      }
    }),
  );
  const ms = Date.now() - started;

  const failed = outcomes.filter((outcome) => outcome.version === undefined);
  const latencies = outcomes.map((outcome) => outcome.endedAt - outcome.startedAt).sort((x, y) => x - y);
  const verification = await verifyWrites(clients[0]!, session, outcomes);
  t.diagnostic(
    `${outcomes.length} writes in ${ms} ms (${Math.round((outcomes.length / ms) * 1000)} writes/s); latency p50 ${latencies[latencies.length >> 1]} ms, ` +
      `max ${latencies.at(-1)} ms; ${verification.runs} runs; ${verification.taskRetries} failed or timed-out workflow tasks; ` +
      `gRPC: ${grpcSeen.attempts} settled attempts, ${grpcSeen.resourceExhausted} RESOURCE_EXHAUSTED (${grpcSeen.surfacedResourceExhausted} given up by the SDK's retry)` +
      `${grpcSeen.messages.size > 0 ? ` "${[...grpcSeen.messages].join('" | "')}"` : ''}; ` +
      `other failed attempts: ${[...grpcSeen.otherFailures].map(([key, count]) => `${count}× ${key}`).join('; ') || 'none'}`,
  );
  assert.deepEqual(
    failed.map((outcome) => `${outcome.updateId}: ${outcome.error ?? ''}`),
    [],
    'no write fails: the client library waits its turn instead of surfacing resource exhausted',
  );
  assert.deepEqual(verification.problems, []);
  assert.equal(verification.applied, CLIENTS * WRITES_PER_CLIENT);
  assert.equal(verification.reaccepted, 0, 'no update id is accepted twice');
  await workerProcess.kill();
});
