import assert from 'node:assert/strict';
import { after, test, type TestContext } from 'node:test';
import type { SessionClient } from '../../src/client';
import { connectClient, temporalAddress, uniqueId } from '../helpers';
import {
  killStrays,
  recordedWrite,
  retryFailed,
  sleep,
  startWorkerProcess,
  tasksStartedBy,
  verifyWrites,
  writeTodos,
  type WorkerProcess,
  type WriteOutcome,
} from './fault-helpers';

// Every client writes to every session, so writes to one session race each other.
const CLIENTS = 4;
const WRITES_PER_LOOP = 10;
/** A write that neither answers nor throws within this long counts as hung. */
const WRITE_TIMEOUT_MS = 60_000;

const clients: SessionClient[] = [];

after(async () => {
  await Promise.all(clients.map((client) => client.closeConnection()));
  await killStrays();
});

/**
 * Every client writes to every session at once, {@link WRITES_PER_LOOP} writes one after another
 * per (client, session), each under its own update id; the counters let a test kill a worker
 * while writes are in flight.
 */
function startWriters(sessions: string[], writers: SessionClient[]) {
  const outcomes: WriteOutcome[] = [];
  let answered = 0;
  let inFlight = 0;
  const loops = sessions.flatMap((session) =>
    writers.map(async (client, writer) => {
      for (let i = 0; i < WRITES_PER_LOOP; i++) {
        inFlight++;
        const outcome = await recordedWrite(client, session, writeTodos(writer, i), `${session}:${writer}:${i}`, WRITE_TIMEOUT_MS);
        inFlight--;
        if (outcome.version !== undefined) answered++;
        outcomes.push(outcome);
      }
    }),
  );
  return {
    outcomes,
    answered: () => answered,
    inFlight: () => inFlight,
    done: Promise.all(loops),
  };
}

async function untilAnswered(writers: ReturnType<typeof startWriters>, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (writers.answered() < count || writers.inFlight() === 0) {
    if (Date.now() > deadline) assert.fail(`only ${writers.answered()} writes answered within ${timeoutMs} ms, before any worker was killed`);
    await sleep(5);
  }
}

async function verifyAll(t: TestContext, verifier: SessionClient, sessions: string[], outcomes: WriteOutcome[], killedAt: number, workers: WorkerProcess[]) {
  const hung = outcomes.filter((outcome) => outcome.hung === true);
  assert.deepEqual(hung.map((outcome) => outcome.updateId), [], 'every client gets an answer: its result or an error');
  const failed = outcomes.filter((outcome) => outcome.version === undefined);
  await retryFailed(verifier, failed, WRITE_TIMEOUT_MS);

  const problems: string[] = [];
  let applied = 0;
  let taskRetries = 0;
  let reaccepted = 0;
  const tasksBy = new Map<number, number>(workers.map((worker) => [worker.pid, 0]));
  for (const session of sessions) {
    const verification = await verifyWrites(verifier, session, outcomes.filter((outcome) => outcome.session === session));
    problems.push(...verification.problems);
    applied += verification.applied;
    taskRetries += verification.taskRetries;
    reaccepted += verification.reaccepted;
    const history = await verifier.exportHistory(session);
    for (const worker of workers) tasksBy.set(worker.pid, tasksBy.get(worker.pid)! + tasksStartedBy(history, worker.pid));
  }
  const spanningKill = outcomes.filter((outcome) => outcome.startedAt < killedAt && outcome.endedAt > killedAt);
  const slowest = Math.max(...outcomes.map((outcome) => outcome.endedAt - outcome.startedAt));
  t.diagnostic(
    `${outcomes.length} writes, ${applied} applied; ${spanningKill.length} in flight at the kill; ${failed.length} failed first ` +
      `(${[...new Set(failed.map((outcome) => outcome.error))].join(' | ') || 'none'}); slowest answer ${slowest} ms; ` +
      `${taskRetries} failed or timed-out workflow tasks; ${reaccepted} update ids re-accepted; workflow tasks by worker pid: ` +
      [...tasksBy].map(([pid, count]) => `${pid}=${count}`).join(', '),
  );
  assert.deepEqual(problems, []);
  assert.equal(applied, outcomes.length, 'every write is applied once, counting the retries of failed ones');
  assert.ok(spanningKill.length > 0, 'some writes were in flight when the worker was killed');
  return tasksBy;
}

test('SIGKILLing the only worker mid-write loses and doubles nothing: every caller gets its result once a new worker starts, or a clear error', { timeout: 120_000 }, async (t) => {
  const taskQueue = uniqueId('faults-kill');
  const address = await temporalAddress();
  const first = await startWorkerProcess(address, taskQueue);
  const killClients: SessionClient[] = [];
  for (let n = 0; n < CLIENTS; n++) killClients.push(await connectClient(taskQueue));
  clients.push(...killClients);
  const sessions = [uniqueId('kill-a'), uniqueId('kill-b'), uniqueId('kill-c')];

  const writers = startWriters(sessions, killClients);
  await untilAnswered(writers, 30, 30_000);
  const killedAt = Date.now();
  await first.kill();
  // Writes keep arriving while no worker runs; they must wait, not fail or vanish.
  await sleep(1_000);
  const second = await startWorkerProcess(address, taskQueue);
  const restartedAfter = Date.now() - killedAt;
  await writers.done;
  t.diagnostic(`new worker polling ${restartedAfter} ms after the kill; all writes settled ${Date.now() - killedAt} ms after it`);

  const tasksBy = await verifyAll(t, killClients[0]!, sessions, writers.outcomes, killedAt, [first, second]);
  assert.ok(tasksBy.get(first.pid)! > 0, 'the killed worker had processed workflow tasks');
  assert.ok(tasksBy.get(second.pid)! > 0, 'the new worker took over');
  await second.kill();
});

test('two workers on one task queue, one SIGKILLed mid-run: the other carries every session on, nothing lost or doubled', { timeout: 120_000 }, async (t) => {
  const taskQueue = uniqueId('faults-pair');
  const address = await temporalAddress();
  const [doomed, survivor] = await Promise.all([startWorkerProcess(address, taskQueue), startWorkerProcess(address, taskQueue)]);
  const pairClients: SessionClient[] = [];
  for (let n = 0; n < CLIENTS; n++) pairClients.push(await connectClient(taskQueue));
  clients.push(...pairClients);
  const sessions = Array.from({ length: 6 }, (_, n) => uniqueId(`pair-${n}`));

  const writers = startWriters(sessions, pairClients);
  await untilAnswered(writers, 60, 30_000);
  const killedAt = Date.now();
  await doomed.kill();
  await writers.done;
  t.diagnostic(`all writes settled ${Date.now() - killedAt} ms after the kill`);

  const tasksBy = await verifyAll(t, pairClients[0]!, sessions, writers.outcomes, killedAt, [doomed, survivor]);
  assert.ok(tasksBy.get(doomed.pid)! > 0, 'the killed worker had processed workflow tasks');
  assert.ok(tasksBy.get(survivor.pid)! > 0, 'the surviving worker carried on');
  await survivor.kill();
});
