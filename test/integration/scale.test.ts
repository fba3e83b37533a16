import assert from 'node:assert/strict';
import { after, test, type TestContext } from 'node:test';
import type { SessionClient } from '../../src/client';
import { runLoadWriters, verifyLoad, writesPerSecond } from '../../bench/load/verify-load';
import { connectClient, startWorker, temporalAddress, uniqueId, type TestWorker } from '../helpers';

// Small on purpose (CI): every writer writes to every session, so writes to one session race.
const SESSIONS = 6;
const WRITERS = 3;
const WRITES = 5;

const clients: SessionClient[] = [];
const workers: TestWorker[] = [];

after(async () => {
  await Promise.all(clients.map((client) => client.closeConnection()));
  await Promise.all(workers.map((worker) => worker.stop()));
});

async function loadAndVerify(t: TestContext, workerCount: number): Promise<void> {
  const taskQueue = uniqueId('scale');
  const started: TestWorker[] = [];
  for (let n = 0; n < workerCount; n++) started.push(await startWorker({ allowParallelInProgress: true }, taskQueue));
  workers.push(...started);
  const client = await connectClient(taskQueue);
  clients.push(client);

  const run = await runLoadWriters({
    prefix: uniqueId(`scale-${workerCount}w`),
    sessions: SESSIONS,
    writers: WRITERS,
    writes: WRITES,
    address: await temporalAddress(),
    taskQueue,
    timeoutMs: 50_000,
  });
  for (const exit of run.exits) {
    assert.equal(exit.code, 0, `writer ${exit.writer} exited with ${exit.code ?? exit.signal}: ${exit.stderr}`);
    assert.ok(exit.report, `writer ${exit.writer} printed no report: ${exit.stderr}`);
    assert.deepEqual(exit.report.failed, []);
  }

  const verification = await verifyLoad(client, run.sessions, run.reports, { expectedPerSession: WRITERS * WRITES });
  assert.deepEqual(verification.problems, []);
  assert.equal(verification.accepted, SESSIONS * WRITERS * WRITES);
  for (const session of verification.sessions) {
    assert.equal(session.inHistory, WRITERS * WRITES, session.session);
    assert.equal(session.version, WRITERS * WRITES, session.session);
  }

  await Promise.all(started.map((worker) => worker.stop()));
  t.diagnostic(
    `${workerCount} worker(s): ${verification.accepted} writes to ${SESSIONS} sessions by ${WRITERS} processes in ${run.writeMs} ms ` +
      `(${writesPerSecond(verification.accepted, run.writeMs)} writes/s; ${run.wallMs} ms with process start-up; ${verification.retries} retried sends, ${verification.taskRetries} failed or timed-out workflow tasks)`,
  );
}

test('three client processes writing the same sessions through one worker lose and double nothing', async (t) => {
  await loadAndVerify(t, 1);
});

test('three client processes writing the same sessions through two workers lose and double nothing', async (t) => {
  await loadAndVerify(t, 2);
});
