/**
 * The tree of a session with many subagents: one visibility call per level plus the root's own
 * query, next to the tree of a session with none; the same tree with every list read (`full`,
 * what every tree cost before); one page of a 500-subagent tree next to a whole 50-subagent tree;
 * and how far the tree's summary lags the subagents' own `todos` query (the visibility store's
 * lag, the price of the summary).
 */
import { listChildren, type SessionClient, type SessionTree, type TreeOptions } from '../src/client';
import { pcts, type MeasurementResult, type Row } from './report';
import { calls, interleaved, todoList, type Bench } from './setup';
import { summarize } from './stats';

const TREE_TARGET = 3;
const PAGE_TARGET = 1.5;
const CHILDREN = 50;

/** Waits (up to a minute) until `check` holds, asking every 5 ms. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`visibility never showed ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Spawns `count` subagents of `parent`, each working (a 3-item list with one in progress), `parallel` at a time. */
async function spawnWorking(bench: Bench, parent: string, count: number, parallel: number, closeEach = false): Promise<string[]> {
  const c = calls(bench);
  const ids = new Array<string>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let k = next++; k < count; k = next++) {
        const child = await bench.sessions.spawnSubagent(parent, { name: `worker-${String(k).padStart(3, '0')}`, task: `part ${k} of the job` });
        await c.oursWithStart(child.sessionId, todoList(3, 1));
        if (closeEach) await bench.sessions.close(child.sessionId);
        ids[k] = child.sessionId;
      }
    }),
  );
  return ids;
}

/** Until the listing shows every subagent of `parent` written (and closed, when `closed`). */
function untilListed(sessions: SessionClient, parent: string, count: number, closed = false): Promise<void> {
  return until(async () => {
    const listed = await sessions.list({ parent, limit: 1000 });
    return listed.filter((s) => s.version !== null && s.version >= 1 && (!closed || s.status === 'closed')).length >= count;
  }, `the ${count} subagents of ${parent}${closed ? ' closed' : ''}`);
}

async function expectTree(sessions: SessionClient, id: string, children: number, options: TreeOptions = {}): Promise<SessionTree> {
  const tree = await sessions.tree(id, options);
  if (tree.children.length !== children) throw new Error(`the tree of ${id} has ${tree.children.length} children, expected ${children}`);
  return tree;
}

/**
 * The visibility lag: a subagent's write, then the tree asked every 5 ms until its summary shows
 * the write's version. The `todos` query would show it at once; this is how stale a summary can be.
 */
async function lagSamples(bench: Bench, parent: string, childIds: readonly string[], count: number): Promise<number[]> {
  const lags: number[] = [];
  for (let i = 0; i < count; i++) {
    const childId = childIds[i % childIds.length]!;
    const written = await bench.sessions.todoWrite(childId, todoList(3, i + 2));
    const version = (await bench.sessions.session(childId)).version;
    const start = performance.now();
    await until(async () => {
      const tree = await bench.sessions.tree(parent, { limit: 1000 });
      return tree.children.some((child) => child.id === childId && child.version !== null && child.version >= version);
    }, `version ${version} of ${childId} (${written.message})`);
    lags.push(performance.now() - start);
  }
  return lags;
}

export async function measureTree(bench: Bench): Promise<MeasurementResult> {
  const measured = bench.quick ? 20 : 100;
  const warmup = bench.quick ? 2 : 5;
  const many = bench.quick ? 100 : 500;
  const pageSize = many / 10;
  const c = calls(bench);
  const parent = bench.id('tree50');
  const finished = bench.id('tree50done');
  const alone = bench.id('tree0');
  const big = bench.id(`tree${many}`);
  const small = bench.id(`tree${pageSize}`);
  await Promise.all([parent, finished, alone, big, small].map((id) => c.oursWithStart(id, todoList(3, 0))));
  bench.progress(`tree: spawning ${CHILDREN} working, ${CHILDREN} finished, ${many} and ${pageSize} subagents…`);
  const childIds = await spawnWorking(bench, parent, CHILDREN, 4);
  await spawnWorking(bench, finished, CHILDREN, 4, true);
  await spawnWorking(bench, big, many, 8);
  await spawnWorking(bench, small, pageSize, 4);
  // A subagent's summary comes from its search attributes: wait until visibility shows every write.
  await untilListed(bench.sessions, parent, CHILDREN);
  await untilListed(bench.sessions, finished, CHILDREN, true);
  await untilListed(bench.sessions, big, many);
  await untilListed(bench.sessions, small, pageSize);

  const walkPages = async (): Promise<void> => {
    let token: string | undefined;
    let seen = 0;
    do {
      const page = await bench.sessions.tree(big, { limit: pageSize, ...(token !== undefined ? { pageToken: token } : {}) });
      seen += page.children.length;
      token = page.nextPageToken ?? undefined;
    } while (token !== undefined);
    if (seen !== many) throw new Error(`the pages of ${big} held ${seen} subagents, expected ${many}`);
  };
  const steps = [
    () => expectTree(bench.sessions, parent, CHILDREN),
    () => expectTree(bench.sessions, alone, 0),
    () => listChildren(bench.temporal, [parent]),
    () => bench.sessions.session(parent),
    () => expectTree(bench.sessions, parent, CHILDREN, { full: true }),
    () => expectTree(bench.sessions, finished, CHILDREN),
    () => expectTree(bench.sessions, big, pageSize, { limit: pageSize }),
    () => expectTree(bench.sessions, small, pageSize),
  ];
  const samples: number[][] = steps.map(() => []);
  const walks: number[] = [];
  for (let i = 0; i < warmup + measured; i++) {
    const times = await interleaved(steps, i);
    if (i < warmup) continue;
    times.forEach((time, k) => samples[k]!.push(time));
    // Walking every page is ten pages' worth: timed a tenth as often.
    if (i % 10 === 0) {
      const start = performance.now();
      await walkPages();
      walks.push(performance.now() - start);
    }
  }
  bench.progress('tree: measuring how far the summary lags a subagent\'s write…');
  const lag = summarize(await lagSamples(bench, parent, childIds, bench.quick ? 10 : 50));
  await Promise.all([parent, finished, alone, big, small].map((id) => bench.sessions.close(id)));

  const [fifty, none, visibility, rootQuery, full, done, page, whole] = samples.map((s) => summarize(s)) as [
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
    ReturnType<typeof summarize>,
  ];
  const walk = summarize(walks);
  const rows: Row[] = [
    { measurement: `tree: ${CHILDREN} working subagents vs none`, ours: pcts(fifty), baseline: pcts(none), ratio: fifty.p50 / none.p50, target: `≤ ${TREE_TARGET}× p50`, met: fifty.p50 / none.p50 <= TREE_TARGET },
    { measurement: `  of it: the visibility call that summarizes the ${CHILDREN}`, ours: pcts(visibility), baseline: pcts(none), ratio: visibility.p50 / none.p50, target: '—', met: null },
    { measurement: `  of it: the root's session query (sent with it)`, ours: pcts(rootQuery), baseline: pcts(none), ratio: rootQuery.p50 / none.p50, target: '—', met: null },
    { measurement: `  the same tree --full (${CHILDREN} session queries)`, ours: pcts(full), baseline: pcts(none), ratio: full.p50 / none.p50, target: '—', met: null },
    { measurement: `tree: ${CHILDREN} finished subagents vs none`, ours: pcts(done), baseline: pcts(none), ratio: done.p50 / none.p50, target: `≤ ${TREE_TARGET}× p50`, met: done.p50 / none.p50 <= TREE_TARGET },
    { measurement: `tree of ${many}, one page of ${pageSize} vs a whole tree of ${pageSize}`, ours: pcts(page), baseline: pcts(whole), ratio: page.p50 / whole.p50, target: `≤ ${PAGE_TARGET}× p50`, met: page.p50 / whole.p50 <= PAGE_TARGET },
    { measurement: `  every page of the ${many} (${many / pageSize} pages)`, ours: pcts(walk), baseline: pcts(whole), ratio: walk.p50 / whole.p50, target: '—', met: null },
    { measurement: "lag: a subagent's write → the tree's summary shows it, ms", ours: pcts(lag), baseline: '—', ratio: null, target: '—', met: null },
  ];
  return {
    name: 'tree',
    title: 'trees — ms p50 / p95 / p99; baselines: the tree of a session without subagents, a whole tree of one page',
    rows,
    figures: {
      parameters: { children: CHILDREN, many, pageSize, measured, warmup, treeTarget: TREE_TARGET, pageTarget: PAGE_TARGET },
      ms: { fifty, none, visibility, rootQuery, full, finished: done, page, wholePage: whole, everyPage: walk, lag },
    },
    notes: [
      `A subagent's summary (status, counts, the todos in progress, version, last change) is its search attributes, so a tree shows it up to the visibility store's lag behind its own todos query: ${lag.p50.toFixed(0)} ms p50, ${lag.p95.toFixed(0)} ms p95 here.`,
    ],
  };
}
