/**
 * Throughput: accepted writes per second with 1, 10 and 100 sessions written at once (each
 * session's writes in sequence, as one agent writes), through one session worker and then
 * two; next to the same load of no-op updates on bare workflows through as many bare workers.
 * Ours and the baseline alternate round by round, on fresh workflows each round. With one worker,
 * a third side runs in the same rounds: sessions on a bench-only bundle without the search-attribute
 * upsert (bench/unindexed-bundle.ts), so that what the upsert costs is measured, not guessed.
 */
import { int, type MeasurementResult, type Row } from './report';
import { calls, closeAll, todoList, type Bench } from './setup';
import { unindexedQueue } from './unindexed-bundle';
import { median } from './stats';

const SESSION_COUNTS = [1, 10, 100] as const;
const LIST_SIZE = 30;
/** Issue 31: a busy queue (10 and 100 sessions writing at once) keeps ≥ 0.9× the versioned bare worker's rate. */
const TARGET = 0.9;
const TARGETED: ReadonlySet<number> = new Set([10, 100]);

/** Our sessions, the bare workflow, and our sessions on the bench-only bundle without the upsert. */
type Side = 'ours' | 'bare' | 'unindexed';

interface Burst {
  writes: number;
  ms: number;
}

export async function measureThroughput(bench: Bench): Promise<MeasurementResult> {
  const rounds = bench.quick ? 2 : 6;
  const minWritesPerRound = bench.quick ? 60 : Math.ceil(1000 / rounds);
  const minPerSession = bench.quick ? 2 : 5;
  const c = calls(bench);
  const rows: Row[] = [];
  const upsertCost: Array<{ sessions: number; withUpsert: number; withoutUpsert: number; bare: number }> = [];
  const figures: Record<string, unknown> = { parameters: { sessionCounts: SESSION_COUNTS, workers: [1, 2], rounds, listSize: LIST_SIZE, minWritesPerRound, minPerSession } };

  const unindexed = await unindexedQueue(bench);

  const burst = async (kind: Side, sessions: number, perSession: number): Promise<Burst> => {
    const ids = Array.from({ length: sessions }, () => bench.id(`tp-${kind}`));
    const write = (id: string, step: number): Promise<unknown> =>
      kind === 'ours'
        ? c.oursWithStart(id, todoList(LIST_SIZE, step))
        : kind === 'unindexed'
          ? unindexed.sessions.todoWrite(id, todoList(LIST_SIZE, step))
          : c.bareWithStart(id, todoList(LIST_SIZE, step));
    await Promise.all(ids.map((id) => write(id, 0))); // created, not timed
    const start = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        for (let step = 1; step <= perSession; step++) await write(id, step);
      }),
    );
    const ms = performance.now() - start;
    if (kind === 'unindexed') await Promise.all(ids.map((id) => unindexed.sessions.close(id)));
    else await closeAll(bench, { [kind === 'ours' ? 'sessions' : 'bare']: ids }, { lanes: ids.length });
    return { writes: sessions * perSession, ms };
  };

  for (const workers of [1, 2] as const) {
    const extra = workers === 2 ? await bench.addWorkers() : [];
    try {
      for (const sessions of SESSION_COUNTS) {
        const perSession = Math.max(minPerSession, Math.ceil(minWritesPerRound / sessions));
        const totals = { ours: { writes: 0, ms: 0 }, bare: { writes: 0, ms: 0 }, unindexed: { writes: 0, ms: 0 } };
        const perRound: Array<Record<Side, number>> = [];
        // The sessions without the upsert run beside one worker only (they have a worker of their own).
        const sides: readonly Side[] = workers === 1 ? ['ours', 'bare', 'unindexed'] : ['ours', 'bare'];
        for (let round = 0; round < rounds; round++) {
          const order = sides.map((_, k) => sides[(k + round) % sides.length]!);
          const rates = { ours: 0, bare: 0, unindexed: 0 };
          for (const kind of order) {
            const result = await burst(kind, sessions, perSession);
            totals[kind].writes += result.writes;
            totals[kind].ms += result.ms;
            rates[kind] = (result.writes * 1000) / result.ms;
          }
          perRound.push(rates);
        }
        const ours = (totals.ours.writes * 1000) / totals.ours.ms;
        const bare = (totals.bare.writes * 1000) / totals.bare.ms;
        const withoutUpsert = totals.unindexed.ms > 0 ? (totals.unindexed.writes * 1000) / totals.unindexed.ms : undefined;
        figures[`${sessions} sessions, ${workers} worker${workers > 1 ? 's' : ''}`] = {
          writesPerSession: perSession,
          writes: totals.ours.writes,
          writesPerSecond: { ours, bare, ...(withoutUpsert !== undefined ? { withoutUpsert } : {}) },
          medianRoundRatio: median(perRound.map((round) => round.ours / round.bare)),
          perRound,
        };
        rows.push({
          measurement: `${sessions} session${sessions > 1 ? 's' : ''}, ${workers} worker${workers > 1 ? 's' : ''}`,
          ours: int(ours),
          baseline: int(bare),
          ratio: ours / bare,
          target: TARGETED.has(sessions) ? `≥ ${TARGET}×` : '—',
          met: TARGETED.has(sessions) ? ours / bare >= TARGET : null,
        });
        if (withoutUpsert !== undefined) {
          rows.push({
            measurement: `${sessions} session${sessions > 1 ? 's' : ''}, ${workers} worker, without the upsert (bench-only)`,
            ours: int(withoutUpsert),
            baseline: int(bare),
            ratio: withoutUpsert / bare,
            target: '—',
            met: null,
          });
          upsertCost.push({ sessions, withUpsert: ours, withoutUpsert, bare });
        }
        bench.progress(
          `throughput ${sessions} sessions, ${workers} worker(s): ${int(ours)} vs ${int(bare)} writes/s${withoutUpsert !== undefined ? ` (${int(withoutUpsert)} without the upsert)` : ''}`,
        );
      }
    } finally {
      for (const worker of extra) await worker.stop();
    }
  }
  const notes: string[] = [];
  const missed = rows.filter((row) => row.met === false);
  if (missed.length > 0) {
    notes.push(
      `${missed.map((row) => `${row.measurement}: ${(row.ratio ?? 0).toFixed(2)}×`).join('; ')} (target ≥ ${TARGET}×). ` +
        'Each accepted write makes one upsert of the session\'s search attributes at the end of its workflow task (the version and the time of the last ' +
        'change move with every write), so that listing sessions, and a tree\'s subagents, is one visibility call: one more history event and one ' +
        'visibility update on the server per write, which the no-op update does not make. Sequential writes to a session land in a workflow task each, ' +
        'so there is nothing to coalesce; a write that moves no listed attribute makes none. That visibility update is kept ' +
        'because a listing that lags its sessions is not exact (docs/speed.md, "What the figures say").' +
        (upsertCost.length > 0
          ? ` Measured in the same rounds, one worker, the same sessions on a bench-only bundle without the upsert: ${upsertCost
              .map(({ sessions, withUpsert, withoutUpsert, bare }) => {
                const share = bare > withUpsert ? Math.min(1, Math.max(0, (withoutUpsert - withUpsert) / (bare - withUpsert))) : 0;
                return `${sessions} session${sessions > 1 ? 's' : ''} ${(withoutUpsert / bare).toFixed(2)}× the bare rate (the upsert is ${Math.round(share * 100)}% of the gap)`;
              })
              .join('; ')}.`
          : ''),
    );
  }
  return {
    name: 'throughput',
    title: `throughput — accepted writes/s, ${LIST_SIZE}-item lists, ${rounds} alternating rounds; baseline: no-op updates on bare workflows, through as many bare workers versioned and PINNED like ours`,
    rows,
    figures,
    notes,
  };
}
