/**
 * The first moments of a session's life: what the workflow bundle weighs (every new workflow
 * instance and every replay evaluates it), and how many sessions 16 concurrent clients create
 * per second, next to bare workflows created the same way (update-with-start of a first write).
 * Ours and the baseline alternate round by round, on fresh ids each round.
 */
import { int, type MeasurementResult, type Row } from './report';
import { bundleComposition, calls, closeAll, todoList, type Bench } from './setup';
import { median } from './stats';

/** Concurrent creators, as the issue measured the HTTP API with. */
const CLIENTS = 16;
const TARGET = 0.9;

/** The bundle's size and whether it carries a schema library (it must not). */
export function bundleRows(bench: Bench): { rows: Row[]; figures: Record<string, unknown> } {
  const ours = bundleComposition(bench.sessionBundle.code);
  const bare = bundleComposition(bench.bareBundle.code);
  const kb = (bytes: number): string => `${int(bytes / 1000)} KB`;
  return {
    rows: [
      {
        measurement: 'workflow bundle, code (source map apart)',
        ours: kb(ours.codeBytes),
        baseline: kb(bare.codeBytes),
        ratio: ours.codeBytes / bare.codeBytes,
        target: '—',
        met: null,
      },
      { measurement: 'workflow bundle, of it zod', ours: kb(ours.zodBytes), baseline: '0 KB', ratio: null, target: 'no schema library', met: ours.zodBytes === 0 },
    ],
    figures: { ours, bare },
  };
}

export async function measureCreation(bench: Bench): Promise<MeasurementResult> {
  const rounds = bench.quick ? 2 : 4;
  const perRound = bench.quick ? 64 : 320;
  const c = calls(bench);
  const bundle = bundleRows(bench);
  const rows: Row[] = [...bundle.rows];
  const notes: string[] = [];
  const totals = { ours: { created: 0, ms: 0 }, bare: { created: 0, ms: 0 } };
  const perRoundRates: Array<{ ours: number; bare: number }> = [];

  /** `perRound` new workflows, created by CLIENTS callers each taking the next id; answers ms. */
  const burst = async (kind: 'ours' | 'bare'): Promise<{ ms: number; ids: string[] }> => {
    const ids = Array.from({ length: perRound }, () => bench.id(`create-${kind}`));
    let next = 0;
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let k = next++; k < ids.length; k = next++) {
          const args = todoList(3, k);
          if (kind === 'ours') await c.oursWithStart(ids[k]!, args);
          else await c.bareWithStart(ids[k]!, args);
        }
      }),
    );
    return { ms: performance.now() - start, ids };
  };

  // One round of each, not counted, so neither side pays the cold start.
  for (const kind of ['ours', 'bare'] as const) await closeAll(bench, { [kind === 'ours' ? 'sessions' : 'bare']: (await burst(kind)).ids }, { lanes: 32 });
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? (['ours', 'bare'] as const) : (['bare', 'ours'] as const);
    const rates = { ours: 0, bare: 0 };
    for (const kind of order) {
      const { ms, ids } = await burst(kind);
      totals[kind].created += ids.length;
      totals[kind].ms += ms;
      rates[kind] = (ids.length * 1000) / ms;
      await closeAll(bench, { [kind === 'ours' ? 'sessions' : 'bare']: ids }, { lanes: 32 });
    }
    perRoundRates.push(rates);
    bench.progress(`creation round ${round + 1}/${rounds}: ${int(rates.ours)} vs ${int(rates.bare)} sessions/s`);
  }
  const ours = (totals.ours.created * 1000) / totals.ours.ms;
  const bare = (totals.bare.created * 1000) / totals.bare.ms;
  const ratio = ours / bare;
  rows.push({
    measurement: `sessions created/s, ${CLIENTS} concurrent clients`,
    ours: int(ours),
    baseline: int(bare),
    ratio,
    target: `≥ ${TARGET}×`,
    met: ratio >= TARGET,
  });
  if (ratio < TARGET) {
    notes.push(
      `creation: ${ratio.toFixed(2)}× the bare workflow's rate (median round ${median(perRoundRates.map((r) => r.ours / r.bare)).toFixed(2)}×). ` +
        'A session\'s first write does more than the no-op: it starts with its input checked, indexes itself (an upsert of seven search attributes) ' +
        'and answers a receipt; each new instance also evaluates the larger bundle.',
    );
  }
  return {
    name: 'creation',
    title: `creating sessions — the workflow bundle, and sessions created per second by ${CLIENTS} concurrent callers (update-with-start of a 3-item first write); baseline: bare workflows created the same way, on a bare worker versioned and PINNED like ours`,
    rows,
    figures: { parameters: { clients: CLIENTS, rounds, perRound, target: TARGET }, bundle: bundle.figures, createdPerSecond: { ours, bare }, perRound: perRoundRates },
    notes,
  };
}
