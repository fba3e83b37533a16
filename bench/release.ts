/**
 * Releases (Worker Deployment Versioning): what a session's move to a new build costs at a turn
 * boundary (one continue-as-new carrying its state), next to an ordinary turn of the same
 * session (turn/start, a write, turn/end), in ms and history bytes; and `release promote` for
 * many idle sessions at once, in seconds until every one is on the new build. Both builds run
 * today's code under two build ids, so only the move is measured.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describeDeployment, setCurrentVersion } from '../src/release/deployment-api';
import { promoteRelease, type ReleaseTarget } from '../src/release/release';
import { createWorker } from '../src/worker';
import { sessionWakeSignal } from '../workflows/messages';
import { pcts, type MeasurementResult } from './report';
import { todoList, type Bench } from './setup';
import { summarize } from './stats';

const POLICY = { allowParallelInProgress: true };

export async function measureRelease(bench: Bench): Promise<MeasurementResult> {
  const moves = bench.quick ? 5 : 30;
  const idleSessions = bench.quick ? 200 : 2000;
  const queue = await bench.openQueue('release');
  const { taskQueue, sessions } = queue;
  const target: ReleaseTarget = { client: bench.temporal, namespace: bench.namespace, deploymentName: taskQueue, taskQueue };
  const service = bench.temporal.workflowService;
  const buildA = (await describeDeployment(service, bench.namespace, taskQueue))?.current;
  if (buildA === undefined || buildA === null) throw new Error(`the release bench's worker did not make its build current on ${taskQueue}`);
  const second = await createWorker({ ...POLICY, temporal: { address: bench.address, namespace: bench.namespace, taskQueue }, deployment: { buildId: `${buildA}-b` } });
  const running = second.run();
  try {
    await second.registered();
    const buildB = second.version.buildId;
    const buildOf = async (id: string): Promise<{ build: string | undefined; runId: string; bytes: number }> => {
      const described = await bench.temporal.workflow.getHandle(id).describe();
      const info = described.raw.workflowExecutionInfo;
      return { build: info?.versioningInfo?.deploymentVersion?.buildId ?? undefined, runId: described.runId, bytes: Number(info?.historySizeBytes ?? 0) };
    };
    const bytesOf = async (id: string, runId: string): Promise<number> =>
      Number((await bench.temporal.workflow.getHandle(id, runId).describe()).raw.workflowExecutionInfo?.historySizeBytes ?? 0);

    // Sessions with some state: a list and a few turns.
    const ids = Array.from({ length: moves }, (_, i) => `${bench.id('release-move')}-${i}`);
    for (const id of ids) {
      for (let k = 0; k < 5; k++) await sessions.todoWrite(id, todoList(5, k % 5));
    }
    const turn = { ms: [] as number[], bytes: [] as number[] };
    for (const id of ids) {
      const before = await buildOf(id);
      const start = performance.now();
      await sessions.turnStart(id);
      await sessions.todoWrite(id, todoList(5, 2));
      await sessions.turnEnd(id);
      await sessions.todos(id); // turn/end is applied once a query sees it
      turn.ms.push(performance.now() - start);
      turn.bytes.push((await bytesOf(id, before.runId)) - before.bytes);
    }

    // The routing changes first and the sessions are woken one at a time, so each move is timed alone.
    const deployment = await describeDeployment(service, bench.namespace, taskQueue);
    await setCurrentVersion(service, bench.namespace, { deploymentName: taskQueue, buildId: buildB }, deployment?.conflictToken ?? null, 'bench');
    await sleep(2_000);
    const move = { ms: [] as number[], bytes: [] as number[] };
    for (const id of ids) {
      const before = await buildOf(id);
      const start = performance.now();
      await bench.temporal.workflow.getHandle(id).signal(sessionWakeSignal, { reason: 'bench' });
      let after = before;
      while (after.build !== buildB || after.runId === before.runId) {
        if (performance.now() - start > 60_000) throw new Error(`session ${id} did not move to ${buildB} within 60 s`);
        await sleep(5);
        after = await buildOf(id);
      }
      move.ms.push(performance.now() - start);
      // What the move added: the old run's last events (the wake, the check, the continue-as-new) and the new run so far.
      move.bytes.push((await bytesOf(id, before.runId)) - before.bytes + after.bytes);
    }
    for (const id of ids) await sessions.close(id);

    // release promote for many idle sessions: all of them back to A.
    bench.progress(`release: starting ${idleSessions} idle sessions on build ${buildB}…`);
    const idle = Array.from({ length: idleSessions }, (_, i) => `${bench.id('release-idle')}-${i}`);
    for (let i = 0; i < idle.length; i += 50) await Promise.all(idle.slice(i, i + 50).map((id) => sessions.todoWrite(id, todoList(3, 1))));
    const promoteStart = performance.now();
    const promoted = await promoteRelease(target, buildA, { moveTimeoutMs: 20 * 60_000 });
    const promoteSeconds = (performance.now() - promoteStart) / 1000;
    for (let i = 0; i < idle.length; i += 50) await Promise.all(idle.slice(i, i + 50).map((id) => sessions.close(id).catch(() => undefined)));

    const t = summarize(turn.ms);
    const m = summarize(move.ms);
    const tb = summarize(turn.bytes);
    const mb = summarize(move.bytes);
    bench.progress(`release: move ${m.p50.toFixed(0)} ms / ${mb.p50.toFixed(0)} B vs turn ${t.p50.toFixed(0)} ms / ${tb.p50.toFixed(0)} B; promote of ${idleSessions}: ${promoteSeconds.toFixed(1)} s, ${promoted.moved} moved`);
    return {
      name: 'release',
      title: "Releases — a session's move to a new build at a turn boundary vs its ordinary turn (ms p50 / p95 / p99, history bytes p50); release promote of idle sessions",
      rows: [
        { measurement: `move (wake → continue-as-new → first task on the new build), ${moves} sessions`, ours: pcts(m), baseline: pcts(t), ratio: m.p50 / t.p50, target: 'reported', met: null },
        { measurement: 'history bytes added by a move vs a turn (p50)', ours: `${mb.p50.toFixed(0)} B`, baseline: `${tb.p50.toFixed(0)} B`, ratio: mb.p50 / tb.p50, target: 'reported', met: null },
        {
          measurement: `release promote, ${idleSessions} idle sessions`,
          ours: `${promoteSeconds.toFixed(1)} s, ${promoted.moved}/${promoted.woken} moved`,
          baseline: '—',
          ratio: null,
          target: 'all moved',
          met: promoted.moved === idleSessions,
        },
      ],
      figures: { parameters: { moves, idleSessions }, ms: { move: m, turn: t }, bytes: { move: mb, turn: tb }, promote: { seconds: promoteSeconds, ...promoted } },
      notes: [
        'A move is one continue-as-new: its new run starts with the whole carried state, so its bytes grow with the session (the list, the conversation up to the context limit).',
      ],
    };
  } finally {
    second.shutdown();
    await running;
    await queue.stop();
  }
}
