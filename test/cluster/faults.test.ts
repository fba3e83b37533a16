/**
 * Faults on the production topology (`startProductionCluster`: PostgreSQL, the Temporal server
 * 1.32.0 on it, three worker processes and the HTTP service, all child processes, none restarted
 * by the cluster): a burst of writes from three client processes (`bench/load/writer.ts`, which
 * sends a write again under the same update id while it fails transiently) while
 *   (a) the Temporal server is SIGKILLed and started again,
 *   (b) PostgreSQL is stopped with `pg_ctl stop -m immediate` and started again,
 *   (c) one of the three workers is SIGKILLed (and started again after the others took over).
 * Each time: nothing accepted is lost or applied twice (`verifyLoad`), every client gets its answer
 * or a named error (a write that failed for good is sent again under its update id afterwards and
 * is applied once), no other process of the cluster dies, the workers poll again and the HTTP
 * service answers a write, both by themselves. The recovery times are printed as diagnostics.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, test, type TestContext } from 'node:test';
import { temporal as proto } from '@temporalio/proto';
import { SessionClient } from '../../src/client';
import { findFreePort, isServing, startThrowawayCluster, type ManagedProcess, type ProcessExit, type ProductionCluster } from '../../src/devserver';
import { runLoadWriters, verifyLoad, type AcceptedWrite, type FailedWrite, type WriterReport } from '../../bench/load/verify-load';
import { describeError, loadTodos } from '../../bench/load/writer';
import { httpCall, ROOT, todo, uniqueId, until } from '../helpers';
import { sleep, verifyWrites } from '../faults/fault-helpers';

const WRITERS = 3;
const SESSIONS = 4;
/** Writes per writer and session: enough that the burst is still on when the fault strikes and after it is repaired. */
const WRITES = 25;
/** The fault strikes once the first session has taken this many writes. */
const WRITES_BEFORE_FAULT = 6;
/** How long the part stays down before it is started again. */
const TEMPORAL_DOWN_MS = 3_000;
const POSTGRES_DOWN_MS = 3_000;
/** Longer than Temporal's 10 s workflow-task timeout: the two other workers must take over the killed one's sessions alone. */
const WORKER_DOWN_MS = 15_000;
/** How long after a repair the workers and the HTTP service may take to serve again (measured: under 10 s). */
const RECOVERY_MS = 120_000;
/**
 * How long a worker may take to be seen polling again. A worker whose shared-queue poll is parked
 * (its sessions' tasks go to its sticky queue) polls anew only when that long poll ends, about a
 * minute later (measured: at most 60 s from the fault).
 */
const POLL_AGAIN_MS = 240_000;
/** The first start on a machine may build the server binaries with Go. */
const FIRST_START_MS = 15 * 60_000;
/** The HTTP answers a client may get while a part is down: each a JSON error whose code says what to do. */
const OUTAGE_ANSWERS = new Set(['503 temporal-unavailable', '503 no-worker', '504 outcome-unknown', '504 session-timeout']);

const taskQueue = uniqueId('cluster-faults');
const token = randomUUID();
let cluster: ProductionCluster;
let client: SessionClient;
/** Every exit of a cluster process, with when it happened. */
const exits: Array<{ name: string; exit: ProcessExit; at: number }> = [];

before(
  async () => {
    const log = join(process.env.TEST_OUTPUT_DIR ?? join(ROOT, 'test-output'), 'cluster-faults.log');
    cluster = await startThrowawayCluster({
      policy: { allowParallelInProgress: true },
      workers: 3,
      httpPort: await findFreePort(),
      // The test restarts what it breaks; a process that dies by itself must stay dead, to be seen.
      restart: 'no',
      output: createWriteStream(log),
      // As docker-compose.yml runs it: the HTTP service requires a token.
      env: { ...process.env, AGENT_SESSIONS_TASK_QUEUE: taskQueue, AGENT_SESSIONS_TOKEN: token },
    });
    for (const part of cluster.processes()) part.onExit((exit) => exits.push({ name: part.name, exit, at: Date.now() }));
    client = await SessionClient.connect({ address: cluster.address, taskQueue });
  },
  { timeout: FIRST_START_MS },
);

after(async () => {
  await client?.closeConnection();
  await cluster?.stop();
});

/** A fault: what breaks the part, and what starts it again. */
interface Fault {
  /** The cluster process it kills (its one exit is expected). */
  part: ManagedProcess;
  strike(): Promise<void>;
  downMs: number;
  repair(): Promise<void>;
}

/** What the HTTP service answered a write sent again (same Idempotency-Key) from the fault on until it succeeded. */
interface HttpRecovery {
  answers: string[];
  okAt: number;
  version: number;
  session: string;
  key: string;
  todos: ReturnType<typeof todo>[];
}

async function httpWriteUntilOk(label: string): Promise<HttpRecovery> {
  const session = uniqueId(`${label}-http`);
  const key = `${session}:probe`;
  const todos = [todo('Written through HTTP across the fault', 'in_progress')];
  const answers: string[] = [];
  const answer = await until('a write through the HTTP service', async () => {
    const reply = await httpCall(cluster.httpUrl!, 'POST', `/sessions/${encodeURIComponent(session)}/todo_write`, { todos }, {
      authorization: `Bearer ${token}`,
      'idempotency-key': key,
    });
    answers.push(reply.status === 200 ? '200' : `${reply.status} ${String((reply.json as { code?: unknown }).code)}`);
    return reply.status === 200 ? (reply.json as { version: number }) : undefined;
  }, RECOVERY_MS, { everyMs: 200, ignoreErrors: true });
  return { answers, okAt: Date.now(), version: answer.version, session, key, todos };
}

/** The pids whose workers polled the workflow task queue since `since` (ms since the epoch), as matching reports its pollers. */
async function pollingSince(since: number): Promise<Set<number>> {
  const described = await client.temporal.workflowService.describeTaskQueue({
    namespace: cluster.namespace,
    taskQueue: { name: taskQueue, kind: proto.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: proto.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const pids = new Set<number>();
  for (const poller of described.pollers ?? []) {
    const at = Number(poller.lastAccessTime?.seconds ?? 0) * 1000 + Math.floor((poller.lastAccessTime?.nanos ?? 0) / 1e6);
    const match = /^(\d+)@(.*)$/.exec(poller.identity ?? '');
    if (match && match[2] === hostname() && at >= since) pids.add(Number(match[1]));
  }
  return pids;
}

/** The recovery figures of one fault, in ms. */
interface Recovery {
  /** Writes answered between the strike and the restart (the other workers carried on, or none: the clients waited). */
  answeredWhileDown: number;
  /** From the strike until every session had taken a write again (the killed worker's sessions moved on). */
  everyAfterStrike: number;
  /** From the restart (the part started again) to the first write answered after it; `undefined` when the burst had ended. */
  firstAfterRestart: number | undefined;
  /** The longest a write waited for its answer or its error, from its first attempt, over the whole burst. */
  longestWait: number;
}

/** The figures of the writers' own answers (not of the test's re-sends after the burst). */
function recoveryOf(struckAt: number, restartedAt: number, writes: readonly AcceptedWrite[], failures: readonly FailedWrite[]): Recovery {
  const firstBySession = new Map<string, number>();
  for (const write of writes.filter((w) => w.answeredAt >= struckAt)) {
    firstBySession.set(write.session, Math.min(firstBySession.get(write.session) ?? Infinity, write.answeredAt));
  }
  const afterRestart = writes.filter((write) => write.answeredAt >= restartedAt).map((write) => write.answeredAt);
  return {
    answeredWhileDown: writes.filter((write) => write.answeredAt >= struckAt && write.answeredAt < restartedAt).length,
    everyAfterStrike: Math.max(...firstBySession.values()) - struckAt,
    firstAfterRestart: afterRestart.length > 0 ? Math.min(...afterRestart) - restartedAt : undefined,
    longestWait: Math.max(...writes.map((write) => write.answeredAt - write.firstSentAt), ...failures.map((write) => write.failedAt - write.firstSentAt)),
  };
}

/** `503 temporal-unavailable ×4, 200` */
function tally(answers: readonly string[]): string {
  const runs: Array<[string, number]> = [];
  for (const answer of answers) {
    const last = runs.at(-1);
    if (last?.[0] === answer) last[1]++;
    else runs.push([answer, 1]);
  }
  return runs.map(([answer, n]) => (n > 1 ? `${answer} ×${n}` : answer)).join(', ');
}

/**
 * The burst, the fault in its middle, and every check of the file comment; returns the line of
 * figures the test prints.
 */
async function burstThrough(t: TestContext, label: string, fault: Fault): Promise<string> {
  const prefix = uniqueId(label);
  const others = cluster.processes().filter((part) => part !== fault.part);
  const pidsBefore = new Map(others.map((part) => [part, part.pid]));
  const exitsBefore = exits.length;

  const load = runLoadWriters({ prefix, sessions: SESSIONS, writers: WRITERS, writes: WRITES, address: cluster.address, taskQueue, timeoutMs: 10 * 60_000 });
  await until(
    `${WRITES_BEFORE_FAULT} writes to ${prefix}-0 before the fault`,
    async () => ((await client.session(`${prefix}-0`)).version >= WRITES_BEFORE_FAULT ? true : undefined),
    120_000,
    { everyMs: 200, ignoreErrors: true },
  );
  await fault.strike();
  const struckAt = Date.now();
  const httpRecovery = httpWriteUntilOk(label);
  await sleep(fault.downMs);
  const repairStartedAt = Date.now();
  await fault.repair();
  const repairedAt = Date.now();
  const http = await httpRecovery;
  const run = await load;

  // Every client got its answer or a named error: no writer was killed for hanging, each printed its report.
  for (const exit of run.exits) {
    assert.equal(exit.signal, null, `writer ${exit.writer} hung and was killed:\n${exit.stderr.slice(-2000)}`);
    assert.ok(exit.report, `writer ${exit.writer} printed no report (exit ${String(exit.code)}):\n${exit.stderr.slice(-2000)}`);
  }
  const failed = run.reports.flatMap((report) => report.failed.map((write) => ({ ...write, writer: report.writer })));
  // Such as the client library's no-worker (code in brackets): right after a server restart, until
  // the workers poll the new matching service again, a slow write is diagnosed as having no worker.
  for (const write of failed) assert.match(write.error, /^\w+(\[[\w-]+\])?: \S/, `a write that failed for good says what failed: ${write.error}`);
  // A caller that got an error sends the write again under its update id: applied once, whether or not it had landed.
  const reports: WriterReport[] = run.reports.map((report) => ({ ...report, accepted: [...report.accepted], failed: [] }));
  for (const write of failed) {
    const i = Number(write.updateId.split(':').at(-1));
    const todos = loadTodos(write.writer, i);
    const sentAt = Date.now();
    const result = await client.todoWrite(write.session, { todos }, { updateId: write.updateId }).catch((error: unknown) => assert.fail(`the retry of ${write.updateId} failed: ${describeError(error)}`));
    reports.find((report) => report.writer === write.writer)!.accepted.push({ session: write.session, updateId: write.updateId, version: result.version, todos, retries: 0, firstSentAt: sentAt, sentAt, answeredAt: Date.now() });
  }
  const verification = await verifyLoad(client, run.sessions, reports, { expectedPerSession: WRITERS * WRITES });
  assert.deepEqual(verification.problems, [], 'nothing accepted is lost or applied twice');

  // The HTTP service came back by itself; its write is applied once, at the version it answered; meanwhile it answered clear errors.
  const httpWrite = { session: http.session, updateId: http.key, todos: http.todos, version: http.version, startedAt: struckAt, endedAt: http.okAt };
  assert.deepEqual((await verifyWrites(client, http.session, [httpWrite])).problems, []);
  for (const answer of http.answers.slice(0, -1)) assert.ok(OUTAGE_ANSWERS.has(answer), `the HTTP service answered ${answer} during the fault`);

  // Nothing else died; the workers poll again by themselves (the killed one, started again, too).
  const died = exits.slice(exitsBefore).filter((e) => e.name !== fault.part.name);
  assert.deepEqual(died.map((e) => e.name), [], 'only the part the fault broke exited');
  for (const part of others) assert.equal(part.pid, pidsBefore.get(part), `${part.name} kept running`);
  for (const part of cluster.processes()) assert.ok(part.isRunning(), `${part.name} runs`);
  const workerPids = cluster.workers.map((worker) => worker.pid!);
  // After a server restart every poller matching lists is new; otherwise a poll must come after the repair.
  const since = fault.part === cluster.temporal ? struckAt : repairedAt;
  await until('all three workers polling again', async () => {
    const polling = await pollingSince(since);
    return workerPids.every((pid) => polling.has(pid)) ? true : undefined;
  }, POLL_AGAIN_MS, { everyMs: 200, ignoreErrors: true });
  const pollingAt = Date.now();

  const times = recoveryOf(struckAt, repairStartedAt, run.reports.flatMap((report) => report.accepted), failed);
  const line =
    `${label}: ${verification.accepted} writes to ${SESSIONS} sessions from ${WRITERS} processes, ${verification.retries} sent again after a transient error, ` +
    `${failed.length} failed for good (${[...new Set(failed.map((write) => write.error.split(':')[0]))].join(', ') || 'none'}) and were applied once when sent again; ` +
    `down ${repairStartedAt - struckAt} ms (${times.answeredWhileDown} writes answered meanwhile), ready again ${repairedAt - repairStartedAt} ms after the restart; ` +
    `first write answered ${times.firstAfterRestart === undefined ? 'after the restart: none, the burst had ended' : `+${times.firstAfterRestart} ms after the restart`}, ` +
    `every session had taken one at +${times.everyAfterStrike} ms after the fault; the longest a write waited: ${times.longestWait} ms; ` +
    `HTTP write answered 200 at +${http.okAt - struckAt} ms after the fault (${tally(http.answers)}); all three workers seen polling again at +${pollingAt - struckAt} ms after the fault`;
  t.diagnostic(line);
  return line;
}

test(
  'the Temporal server SIGKILLed mid-burst and started again: nothing accepted lost or doubled, every client answered, workers and HTTP reconnect by themselves',
  { timeout: 10 * 60_000 },
  async (t) => {
    await burstThrough(t, 'temporal-sigkill', {
      part: cluster.temporal,
      async strike() {
        cluster.temporal.kill('SIGKILL');
        await cluster.temporal.exited();
      },
      downMs: TEMPORAL_DOWN_MS,
      async repair() {
        cluster.temporal.start();
        await until('the Temporal server serving again', async () => ((await isServing(cluster.address, cluster.namespace, 2_000)) ? true : undefined), RECOVERY_MS, { everyMs: 200, ignoreErrors: true });
      },
    });
  },
);

test(
  'PostgreSQL stopped mid-burst with pg_ctl stop -m immediate and started again: nothing accepted lost or doubled, every client answered, the server, workers and HTTP carry on',
  { timeout: 10 * 60_000 },
  async (t) => {
    const { postgres } = cluster;
    // pg_ctl refuses to run as root; it runs as the owner of the data directory, as PostgreSQL does.
    const owner = await stat(postgres.dataDir);
    await burstThrough(t, 'postgres-immediate-stop', {
      part: postgres.process,
      async strike() {
        const stopped = await new Promise<{ code: number; output: string }>((done) =>
          execFile(postgres.binaries.pgCtl, ['stop', '-m', 'immediate', '-D', postgres.dataDir], { uid: owner.uid, gid: owner.gid, env: { PATH: process.env['PATH'] ?? '' } }, (error, stdout, stderr) =>
            done({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
          ),
        );
        assert.equal(stopped.code, 0, `pg_ctl stop -m immediate failed: ${stopped.output}`);
        await postgres.process.exited();
      },
      downMs: POSTGRES_DOWN_MS,
      async repair() {
        postgres.process.start();
        await postgres.ready(RECOVERY_MS);
      },
    });
  },
);

test(
  'one of three workers SIGKILLed mid-burst: the two others take its sessions over, nothing accepted lost or doubled, and it polls again once started',
  { timeout: 10 * 60_000 },
  async (t) => {
    const victim = cluster.workers[1]!;
    await burstThrough(t, 'worker-sigkill', {
      part: victim,
      async strike() {
        victim.kill('SIGKILL');
        await victim.exited();
      },
      downMs: WORKER_DOWN_MS,
      async repair() {
        const polling = victim.waitForLine(/^worker polling task queue/, RECOVERY_MS);
        victim.start();
        await polling;
      },
    });
  },
);
