/**
 * What grows with the number of sessions and children: the first page of `GET /sessions` on a
 * task queue holding 10,000 sessions next to one holding 20 (each queue its own worker, HTTP
 * service and sessions); what keeping the listing in search attributes adds to every write's
 * history; and the tree of a session with 50 subagents next to the tree of one with none.
 */
import { temporal as proto } from '@temporalio/proto';
import type { SessionClient } from '../src/client';
import { startHttpServer } from '../src/http/server';
import { int, pcts, type MeasurementResult, type Row } from './report';
import { calls, interleaved, listJsonBytes, POLICY, todoList, type Bench } from './setup';
import { summarize } from './stats';

const LIST_TARGET = 2;
const TREE_TARGET = 3;
const CHILDREN = 50;

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
      for (let tries = 0; (await queue.sessions.list({ limit: 1000 })).length < Math.min(count, 1000); tries++) {
        if (tries > 600) throw new Error(`visibility never listed ${count} sessions on ${queue.taskQueue}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const get = async (url: string, expected: number): Promise<void> => {
      const response = await fetch(`${url}/sessions`);
      const body = (await response.json()) as unknown[];
      if (!response.ok || !Array.isArray(body) || body.length !== expected) throw new Error(`GET ${url}/sessions answered ${response.status} with ${Array.isArray(body) ? body.length : 'no'} sessions, expected ${expected}`);
    };
    const samples = { large: [] as number[], small: [] as number[] };
    for (let i = 0; i < warmup + measured; i++) {
      const [l, s] = await interleaved([() => get(servers[0]!.url, 100), () => get(servers[1]!.url, small)], i);
      if (i < warmup) continue;
      samples.large.push(l!);
      samples.small.push(s!);
    }
    const l = summarize(samples.large);
    const s = summarize(samples.small);
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
          measurement: 'search attributes: history B/write vs list JSON',
          ours: int(bytes.upsertBytesPerWrite),
          baseline: int(bytes.listJsonBytes),
          ratio: bytes.upsertBytesPerWrite / bytes.listJsonBytes,
          target: '—',
          met: null,
        },
      ],
      figures: { parameters: { large, small, measured, warmup, pageSize: 100, target: LIST_TARGET }, ms: { large: l, small: s }, indexBytes: bytes },
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

/** `client.tree` of a parent with 50 subagents next to that of a session with none. */
async function treeRows(bench: Bench): Promise<{ rows: Row[]; figures: Record<string, unknown> }> {
  const measured = bench.quick ? 20 : 100;
  const warmup = bench.quick ? 2 : 5;
  const c = calls(bench);
  const parent = bench.id('tree50');
  const alone = bench.id('tree0');
  await Promise.all([c.oursWithStart(parent, todoList(3, 0)), c.oursWithStart(alone, todoList(3, 0))]);
  for (let k = 0; k < CHILDREN; k++) {
    const child = await bench.sessions.spawnSubagent(parent, { name: `worker-${k}`, task: `part ${k} of the job` });
    await c.oursWithStart(child.sessionId, todoList(3, k));
  }
  const expectChildren = async (id: string, count: number): Promise<void> => {
    const tree = await bench.sessions.tree(id);
    if (tree.children.length !== count) throw new Error(`the tree of ${id} has ${tree.children.length} children, expected ${count}`);
  };
  // The parent's subagents are found through visibility: wait until it lists all of them.
  for (let tries = 0; (await bench.sessions.list({ parent, limit: 1000 })).length < CHILDREN; tries++) {
    if (tries > 600) throw new Error(`visibility never listed the ${CHILDREN} subagents of ${parent}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const samples = { fifty: [] as number[], none: [] as number[] };
  for (let i = 0; i < warmup + measured; i++) {
    const [f, n] = await interleaved([() => expectChildren(parent, CHILDREN), () => expectChildren(alone, 0)], i);
    if (i < warmup) continue;
    samples.fifty.push(f!);
    samples.none.push(n!);
  }
  await bench.sessions.close(parent);
  await bench.sessions.close(alone);
  const f = summarize(samples.fifty);
  const n = summarize(samples.none);
  const ratio = f.p50 / n.p50;
  return {
    rows: [{ measurement: `tree: ${CHILDREN} subagents vs none`, ours: pcts(f), baseline: pcts(n), ratio, target: `≤ ${TREE_TARGET}× p50`, met: ratio <= TREE_TARGET }],
    figures: { parameters: { children: CHILDREN, measured, warmup, target: TREE_TARGET }, ms: { fifty: f, none: n } },
  };
}

export async function measureListing(bench: Bench): Promise<MeasurementResult> {
  const list = await listRows(bench);
  bench.progress(`listing: ${list.rows[0]!.ours} vs ${list.rows[0]!.baseline} ms`);
  const tree = await treeRows(bench);
  bench.progress(`tree: ${tree.rows[0]!.ours} vs ${tree.rows[0]!.baseline} ms`);
  const notes: string[] = [];
  const [listRow] = list.rows;
  const [treeRow] = tree.rows;
  if (listRow?.met === false) {
    notes.push(
      `GET /sessions: ${listRow.ratio?.toFixed(2)}× with the larger queue. The page is one visibility call either way; what grows is the page itself ` +
        '(100 sessions against 20, each decoded from its search attributes) and the visibility store\'s query over more rows.',
    );
  }
  if (treeRow?.met === false) {
    notes.push(
      `tree: ${treeRow.ratio?.toFixed(2)}× with ${CHILDREN} subagents: one visibility call finds them, then ${CHILDREN} session queries run side by side, ` +
        'each a workflow task on the worker; on 2 cores they queue behind each other.',
    );
  }
  return {
    name: 'listing',
    title: 'listing and trees — ms p50 / p95 / p99; baselines: the same call on a small queue, on a session without subagents',
    rows: [...list.rows, ...tree.rows],
    figures: { list: list.figures, tree: tree.figures },
    notes,
  };
}
