/**
 * Replay speed: history events per second of `Worker.runReplayHistories` over recorded session
 * histories (writes and turns, then close), next to bare-workflow histories recorded from the
 * same sequence of messages (the same lists as no-op updates, the same turn signals, a close),
 * so both have (nearly) the same length and the same payload bytes.
 */
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { History } from '../src/history/session-history';
import { replaySessionHistory } from '../src/worker';
import { bareCloseUpdate, bareTurnEndSignal, bareTurnStartSignal, BARE_WORKFLOW_TYPE } from './baseline-workflows';
import { int, type MeasurementResult, type Row } from './report';
import { bundleComposition, calls, closeAll, describeBundles, POLICY, todoList, type Bench } from './setup';
import { median } from './stats';

const TARGET = 0.8;
/** Short histories are where module evaluation dominates: the bundle carries no schema library, so ≥ 0.95× (issue 11). */
const SHORT_TARGET = 0.95;
const LIST_SIZE = 30;
const TURN_EVERY = 20;

interface Recorded {
  workflowId: string;
  history: History;
}

async function replayAll(workflowBundle: WorkflowBundle, histories: readonly Recorded[]): Promise<number> {
  const start = performance.now();
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: 'bench-replay' }, histories)) {
    if (result.error !== undefined) throw new Error(`replay of ${result.workflowId} failed: ${String(result.error)}`);
  }
  return performance.now() - start;
}

function eventsOf(histories: readonly Recorded[]): number {
  return histories.reduce((sum, { history }) => sum + (history.events?.length ?? 0), 0);
}

export async function measureReplay(bench: Bench): Promise<MeasurementResult> {
  const count = bench.quick ? 2 : 5;
  const writes = bench.quick ? 50 : 200;
  const reps = bench.quick ? 3 : 7;
  const c = calls(bench);

  bench.progress(`replay: recording ${count} session and ${count} bare histories of ${writes} writes each…`);
  const pairs = await Promise.all(
    Array.from({ length: count }, async () => {
      const sid = bench.id('replay');
      const bid = bench.id('replay-bare');
      const bare = bench.temporal.workflow.getHandle(bid);
      const both = (ours: () => Promise<unknown>, theirs: () => Promise<unknown>): Promise<unknown> => Promise.all([ours(), theirs()]);
      await both(
        () => bench.sessions.start(sid),
        () => bench.temporal.workflow.start(BARE_WORKFLOW_TYPE, { workflowId: bid, taskQueue: bench.bareQueue, args: [] }),
      );
      await both(() => bench.sessions.turnStart(sid), () => bare.signal(bareTurnStartSignal, {}));
      for (let step = 1; step <= writes; step++) {
        const args = todoList(LIST_SIZE, step);
        await both(() => c.oursPlain(sid, args), () => c.barePlain(bid, args));
        if (step % TURN_EVERY === 0 && step < writes) {
          await both(() => bench.sessions.turnEnd(sid), () => bare.signal(bareTurnEndSignal, {}));
          await both(() => bench.sessions.turnStart(sid), () => bare.signal(bareTurnStartSignal, {}));
        }
      }
      await both(() => bench.sessions.turnEnd(sid), () => bare.signal(bareTurnEndSignal, {}));
      await both(() => bench.sessions.close(sid), () => bare.executeUpdate(bareCloseUpdate, { args: [] }));
      const [ours, theirs] = await Promise.all([bench.temporal.workflow.getHandle(sid).fetchHistory(), bare.fetchHistory()]);
      return { ours: { workflowId: sid, history: ours }, bare: { workflowId: bid, history: theirs } };
    }),
  );
  // Short histories (start, one write, close): what replay costs per workflow instance.
  const shortCount = bench.quick ? 5 : 20;
  const shortPairs = await Promise.all(
    Array.from({ length: shortCount }, async (_, k) => {
      const sid = bench.id('replay-short');
      const bid = bench.id('replay-short-bare');
      const args = todoList(3, k);
      await Promise.all([c.oursWithStart(sid, args), c.bareWithStart(bid, args)]);
      await closeAll(bench, { sessions: [sid], bare: [bid] });
      const [ours, theirs] = await Promise.all([bench.temporal.workflow.getHandle(sid).fetchHistory(), bench.temporal.workflow.getHandle(bid).fetchHistory()]);
      return { ours: { workflowId: sid, history: ours }, bare: { workflowId: bid, history: theirs } };
    }),
  );
  const oursShort = shortPairs.map((pair) => pair.ours);
  const bareShort = shortPairs.map((pair) => pair.bare);
  const ours = pairs.map((pair) => pair.ours);
  const bare = pairs.map((pair) => pair.bare);
  const oursEvents = eventsOf(ours);
  const bareEvents = eventsOf(bare);
  const oursOne = eventsOf(ours.slice(0, 1));
  const bareOne = eventsOf(bare.slice(0, 1));

  const times = {
    oursAll: [] as number[],
    bareAll: [] as number[],
    oursOne: [] as number[],
    bareOne: [] as number[],
    library: [] as number[],
    oursShort: [] as number[],
    bareShort: [] as number[],
  };
  // One untimed pass each first: it loads both bundles and warms the JIT.
  await replayAll(bench.sessionBundle, ours.slice(0, 1));
  await replayAll(bench.bareBundle, bare.slice(0, 1));
  for (let rep = 0; rep < reps; rep++) {
    const steps: Array<() => Promise<void>> = [
      async () => void times.oursAll.push(await replayAll(bench.sessionBundle, ours)),
      async () => void times.bareAll.push(await replayAll(bench.bareBundle, bare)),
      async () => void times.oursOne.push(await replayAll(bench.sessionBundle, ours.slice(0, 1))),
      async () => void times.bareOne.push(await replayAll(bench.bareBundle, bare.slice(0, 1))),
      async () => void times.oursShort.push(await replayAll(bench.sessionBundle, oursShort)),
      async () => void times.bareShort.push(await replayAll(bench.bareBundle, bareShort)),
      async () => {
        const start = performance.now();
        for (const { history, workflowId } of ours) await replaySessionHistory(history, POLICY, workflowId);
        times.library.push(performance.now() - start);
      },
    ];
    for (let k = 0; k < steps.length; k++) await steps[(k + rep) % steps.length]!();
    bench.progress(`replay: repetition ${rep + 1}/${reps}`);
  }
  const m = Object.fromEntries(Object.entries(times).map(([name, sample]) => [name, median(sample)])) as Record<keyof typeof times, number>;
  const rate = (events: number, ms: number): number => (events * 1000) / ms;
  const oursRate = rate(oursEvents, m.oursAll);
  const bareRate = rate(bareEvents, m.bareAll);
  // Without the replay worker's start-up: the extra time the other histories took.
  const oursMarginal = count > 1 ? rate(oursEvents - oursOne, m.oursAll - m.oursOne) : Number.NaN;
  const bareMarginal = count > 1 ? rate(bareEvents - bareOne, m.bareAll - m.bareOne) : Number.NaN;
  const libraryRate = rate(oursEvents, m.library);
  const rows: Row[] = [
    {
      measurement: `runReplayHistories, ${count} histories`,
      ours: `${int(oursRate)} ev/s`,
      baseline: `${int(bareRate)} ev/s`,
      ratio: oursRate / bareRate,
      target: `≥ ${TARGET}×`,
      met: oursRate / bareRate >= TARGET,
    },
  ];
  if (count > 1) {
    rows.push({
      measurement: 'same, without replay-worker start-up',
      ours: `${int(oursMarginal)} ev/s`,
      baseline: `${int(bareMarginal)} ev/s`,
      ratio: oursMarginal / bareMarginal,
      target: `≥ ${TARGET}×`,
      met: oursMarginal / bareMarginal >= TARGET,
    });
  }
  const oursShortRate = rate(eventsOf(oursShort), m.oursShort);
  const bareShortRate = rate(eventsOf(bareShort), m.bareShort);
  rows.push({
    measurement: `runReplayHistories, ${shortCount} one-write histories`,
    ours: `${int(oursShortRate)} ev/s`,
    baseline: `${int(bareShortRate)} ev/s`,
    ratio: oursShortRate / bareShortRate,
    target: `≥ ${SHORT_TARGET}×`,
    met: oursShortRate / bareShortRate >= SHORT_TARGET,
  });
  rows.push({
    measurement: 'replaySessionHistory (fold + replayer), each',
    ours: `${int(libraryRate)} ev/s`,
    baseline: `${int(bareRate)} ev/s`,
    ratio: libraryRate / bareRate,
    target: '—',
    met: null,
  });
  const notes: string[] = [];
  if (oursRate / bareRate < TARGET) {
    const startup = { ours: m.oursOne - (m.oursAll - m.oursOne) / Math.max(1, count - 1), bare: m.bareOne - (m.bareAll - m.bareOne) / Math.max(1, count - 1) };
    notes.push(
      `replay is ${(oursRate / bareRate).toFixed(2)}× the bare workflow's events/s over ${count} histories. ` +
        `Estimated replay-worker start-up (it compiles the whole bundle, inline source map included): ${startup.ours.toFixed(0)} ms for the session bundle ` +
        `(${(bench.sessionBundle.code.length / 1e6).toFixed(1)} MB) vs ${startup.bare.toFixed(0)} ms for the bare one (${(bench.bareBundle.code.length / 1e6).toFixed(1)} MB); ` +
        (count > 1 ? `without it the ratio is ${(oursMarginal / bareMarginal).toFixed(2)}×.` : ''),
    );
  }
  if (oursShortRate / bareShortRate < SHORT_TARGET) {
    const perHistory = (m.oursShort - m.bareShort) / shortCount;
    notes.push(
      `short histories: ${(oursShortRate / bareShortRate).toFixed(2)}× — ${perHistory.toFixed(1)} ms more per history (${eventsOf(oursShort) / shortCount} events each). ` +
        "Each replayed history is a new workflow instance, and a new instance evaluates the bundle's modules afresh (the SDK isolates module state per " +
        `workflow): ${describeBundles(bench)}.`,
    );
  }
  if (libraryRate / bareRate < TARGET) {
    notes.push(
      `replaySessionHistory (behind \`agent-sessions replay\` and client.replay) is ${(libraryRate / bareRate).toFixed(2)}× (no target): it takes one session ` +
        'per call, so each call starts its own replay worker (compiling the whole bundle) and first folds the history offline (decoding every payload ' +
        'a second time) — the price of its two checks, paid per session.',
    );
  }
  return {
    name: 'replay',
    title: `replay speed — history events/s, median of ${reps}; baseline: bare-workflow histories of the same messages`,
    rows,
    notes,
    figures: {
      parameters: { histories: count, writesPerHistory: writes, listSize: LIST_SIZE, turnEvery: TURN_EVERY, repetitions: reps, target: TARGET, shortTarget: SHORT_TARGET },
      events: { ours: oursEvents, bare: bareEvents, oursFirst: oursOne, bareFirst: bareOne, oursShort: eventsOf(oursShort), bareShort: eventsOf(bareShort), shortHistories: shortCount },
      medianMs: m,
      samplesMs: times,
      eventsPerSecond: {
        ours: oursRate,
        bare: bareRate,
        oursWithoutStartup: oursMarginal,
        bareWithoutStartup: bareMarginal,
        oursShort: oursShortRate,
        bareShort: bareShortRate,
        replaySessionHistory: libraryRate,
      },
      bundles: { session: bundleComposition(bench.sessionBundle.code), bare: bundleComposition(bench.bareBundle.code) },
    },
  };
}
