/**
 * What grows with the number of sessions and children: the first page of `GET /sessions` on a
 * task queue holding 10,000 sessions next to one holding 20 (each queue its own worker, HTTP
 * service and sessions); what keeping the listing in search attributes adds to every write's
 * history. (The tree of a session with many subagents is `bench/tree.ts`.)
 */
import { temporal as proto } from '@temporalio/proto';
import { listQuery, type SessionClient } from '../src/client';
import { startHttpServer } from '../src/http/server';
import { int, pcts, type MeasurementResult, type Row } from './report';
import { interleaved, listJsonBytes, POLICY, todoList, type Bench } from './setup';
import { summarize } from './stats';

const LIST_TARGET = 2;

/** `count` sessions on the client's queue, each created by a first 3-item write, `parallel` at a time. */
async function createSessions(bench: Bench, sessions: SessionClient, prefix: string, count: number, parallel: number): Promise<void> {
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let k = next++; k < count; k = next++) {
        await sessions.todoWrite(`${prefix}-${String(k).padStart(5, '0')}`, todoList(3, k));
        if (++done % 1000 === 0) bench.progress(`listing: ${int(done)}/${int(count)} sessions created`);
      }
    }),
  );
}

/** Waits (up to a minute) until visibility lists at least `count` sessions matching `filter`. */
async function untilListed(sessions: SessionClient, filter: { parent?: string }, count: number, what: string): Promise<void> {
  for (let tries = 0; (await sessions.list({ ...filter, limit: 1000 })).length < count; tries++) {
    if (tries > 600) throw new Error(`visibility never listed ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** GET /sessions (first page, the default 100) on a large and a small queue, alternating. */
async function listRows(bench: Bench): Promise<{ rows: Row[]; figures: Record<string, unknown> }> {
  const large = bench.quick ? 1_000 : 10_000;
  const small = 20;
  const measured = bench.quick ? 30 : 200;
  const warmup = bench.quick ? 3 : 10;
  const big = await bench.openQueue('list-large');
  const little = await bench.openQueue('list-small');
  const servers = await Promise.all([big, little].map((queue) => startHttpServer({ client: queue.sessions, policy: POLICY, port: 0 })));
  try {
    await createSessions(bench, little.sessions, 'small', small, 4);
    await createSessions(bench, big.sessions, 'large', large, 32);
    // Visibility is eventually consistent: wait until both listings count every session.
    for (const [queue, count] of [[big, large], [little, small]] as const) {
      await untilListed(queue.sessions, {}, Math.min(count, 1000), `${count} sessions on ${queue.taskQueue}`);
    }
    const get = async (url: string, expected: number, query = ''): Promise<void> => {
      const response = await fetch(`${url}/sessions${query}`);
      const body = (await response.json()) as unknown[];
      if (!response.ok || !Array.isArray(body) || body.length !== expected) throw new Error(`GET ${url}/sessions answered ${response.status} with ${Array.isArray(body) ? body.length : 'no'} sessions, expected ${expected}`);
    };
    // The same page size on both queues too, to tell the page's size from the store's.
    // And Temporal's own visibility call for the large queue's first page, to tell ours from the store's.
    const query = listQuery(big.taskQueue, {});
    const raw = () => big.sessions.temporal.connection.workflowService.listWorkflowExecutions({ namespace: big.sessions.temporal.options.namespace, query, pageSize: 100 });
    const samples = { large: [] as number[], small: [] as number[], largeSmallPage: [] as number[], raw: [] as number[] };
    for (let i = 0; i < warmup + measured; i++) {
      const [l, s, p, r] = await interleaved(
        [() => get(servers[0]!.url, 100), () => get(servers[1]!.url, small), () => get(servers[0]!.url, small, `?limit=${small}`), raw],
        i,
      );
      if (i < warmup) continue;
      samples.large.push(l!);
      samples.small.push(s!);
      samples.largeSmallPage.push(p!);
      samples.raw.push(r!);
    }
    const l = summarize(samples.large);
    const s = summarize(samples.small);
    const p = summarize(samples.largeSmallPage);
    const r = summarize(samples.raw);
    const ratio = l.p50 / s.p50;
    const bytes = await indexBytesPerWrite(bench, little.sessions);
    return {
      rows: [
        {
          measurement: `GET /sessions, first page: ${int(large)} vs ${small} sessions`,
          ours: pcts(l),
          baseline: pcts(s),
          ratio,
          target: `≤ ${LIST_TARGET}× p50`,
          met: ratio <= LIST_TARGET,
        },
        {
          measurement: `  the same, ?limit=${small} on the ${int(large)}`,
          ours: pcts(p),
          baseline: pcts(s),
          ratio: p.p50 / s.p50,
          target: '—',
          met: null,
        },
        {
          measurement: `  the first page vs Temporal's listWorkflowExecutions of it`,
          ours: pcts(l),
          baseline: pcts(r),
          ratio: l.p50 / r.p50,
          target: '—',
          met: null,
        },
        {
          measurement: 'search attributes: history B/write vs list JSON',
          ours: int(bytes.upsertBytesPerWrite),
          baseline: int(bytes.listJsonBytes),
          ratio: bytes.upsertBytesPerWrite / bytes.listJsonBytes,
          target: '—',
          met: null,
        },
      ],
      figures: { parameters: { large, small, measured, warmup, pageSize: 100, target: LIST_TARGET }, ms: { large: l, small: s, largeWithSmallPage: p, temporalCall: r }, indexBytes: bytes },
    };
  } finally {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all([big.stop(), little.stop()]);
  }
}

/**
 * The history bytes the listing's search attributes add per write: the encoded size of the
 * upsert events in a session written 20 times with 30-item lists whose counts change each write.
 */
async function indexBytesPerWrite(bench: Bench, sessions: SessionClient): Promise<{ writes: number; upserts: number; upsertBytesPerWrite: number; listJsonBytes: number }> {
  const id = bench.id('index-bytes');
  const writes = 20;
  let json = 0;
  for (let step = 0; step < writes; step++) {
    const args = todoList(30, step);
    json += listJsonBytes(args);
    await sessions.todoWrite(id, args);
  }
  const history = await sessions.temporal.workflow.getHandle(id).fetchHistory();
  const type = proto.api.enums.v1.EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES;
  const upserts = (history.events ?? []).filter((event) => event.eventType === type);
  const bytes = upserts.reduce((sum, event) => sum + proto.api.history.v1.HistoryEvent.encode(event).finish().length, 0);
  await sessions.close(id);
  return { writes, upserts: upserts.length, upsertBytesPerWrite: bytes / writes, listJsonBytes: json / writes };
}

export async function measureListing(bench: Bench): Promise<MeasurementResult> {
  const list = await listRows(bench);
  bench.progress(`listing: ${list.rows[0]!.ours} vs ${list.rows[0]!.baseline} ms`);
  const notes: string[] = [];
  const [listRow] = list.rows;
  if (listRow?.met === false) {
    const samePage = list.rows[1]!.ratio ?? Number.NaN;
    notes.push(
      `GET /sessions: ${listRow.ratio?.toFixed(2)}× with the larger queue, where the first page holds 100 sessions against 20; asking the large queue ` +
        `for a page of 20 is ${samePage.toFixed(2)}× the small queue's, so ${samePage <= LIST_TARGET ? 'the number of sessions stored costs little and the rest is the page itself' : "the visibility store's query itself grows with the sessions stored"}. ` +
        `Temporal's own listWorkflowExecutions of that 100-row page takes ${list.rows[2]!.baseline.split(' / ')[0]} ms (p50), so the HTTP page is ${list.rows[2]!.ratio?.toFixed(2)}× the store's answer.`,
    );
  }
  return {
    name: 'listing',
    title: 'listing — ms p50 / p95 / p99; baselines: the same call on a small queue',
    rows: list.rows,
    figures: { list: list.figures },
    notes,
  };
}
