import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { subagentSpawnUpdate } from '../../workflows/messages';
import type { SessionTree, TreeOptions } from '../../src/client';
import { assertRejected, countAcceptedUpdates, runCli, todo, uniqueId, until, useTestBed } from '../helpers';

const bed = useTestBed('subagents', { allowParallelInProgress: true });

/**
 * The tree once visibility shows what `ready` waits for: a subagent's summary comes from its
 * search attributes, which trail its writes by Temporal's visibility lag.
 */
async function treeWhen(id: string, ready: (tree: SessionTree) => boolean, options: TreeOptions = {}): Promise<SessionTree> {
  let last: SessionTree | undefined;
  return until(`the tree of ${id} to catch up (last seen: ${JSON.stringify(last)})`, async () => {
    last = await bed.client.tree(id, options);
    return ready(last) ? last : undefined;
  });
}

/** Runs `work` with every `session` query of the bed's client recorded, by id, in `read`; the client is as it was afterwards. */
async function withSessionReads(work: (read: string[]) => Promise<void>): Promise<void> {
  const read: string[] = [];
  const session = bed.client.session.bind(bed.client);
  bed.client.session = async (id: string) => {
    read.push(id);
    return session(id);
  };
  try {
    await work(read);
  } finally {
    bed.client.session = session;
  }
}

describe('subagents', () => {
  test('a parent with three subagents working in parallel shows up in tree and list while running and after closing', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    await bed.client.turnStart(parent);
    const names = ['tests', 'docs', 'lint'];
    const children = await Promise.all(names.map((name) => bed.client.spawnSubagent(parent, { name, task: `handle ${name}` })));
    assert.deepEqual(children.map((c) => c.sessionId), names.map((name) => `${parent}/${name}`));
    await bed.client.todoWrite(parent, { todos: names.map((name) => todo(`Subagent ${name}`, 'in_progress')) });

    // Each subagent plans over two turns, all three at once.
    await Promise.all(
      children.map(async ({ sessionId, name }) => {
        for (let turn = 1; turn <= 2; turn++) {
          await bed.client.turnStart(sessionId);
          await bed.client.todoWrite(sessionId, { todos: [todo(`${name} step 1`, 'in_progress'), todo(`${name} step 2`, 'in_progress')] });
          await bed.client.todoWrite(sessionId, { todos: [todo(`${name} step 1`, 'completed'), todo(`${name} step 2`, turn === 2 ? 'completed' : 'in_progress')] });
          await bed.client.turnEnd(sessionId);
        }
      }),
    );

    const done = { pending: 0, in_progress: 0, completed: 2 };
    // Visibility follows the sessions by a moment: wait for each subagent's last event (its second turn/end, version 8).
    const tree = await treeWhen(parent, (t) => t.children.length === 3 && t.children.every((c) => JSON.stringify(c.counts) === JSON.stringify(done) && c.version === 8));
    assert.equal(tree.id, parent);
    assert.deepEqual(tree.counts, { pending: 0, in_progress: 3, completed: 0 });
    assert.deepEqual(tree.inProgressContent, names.map((name) => `Subagent ${name}`));
    // The three spawns were sent at once, so the parent's record, not the request, says their order.
    const spawnOrder = (await bed.client.session(parent)).children.map((c) => c.sessionId);
    assert.deepEqual([...spawnOrder].sort(), children.map((c) => c.sessionId).sort());
    assert.deepEqual(tree.children.map((c) => c.id), spawnOrder, 'in the order the parent spawned them');
    for (const child of tree.children) {
      assert.equal(child.closed, false);
      assert.equal(child.todos, undefined, 'a summarized subagent carries no list');
      assert.deepEqual(child.inProgressContent, []);
      assert.equal(child.version, 8);
      assert.equal(child.subagents, 0);
    }
    const session = await bed.client.session(`${parent}/docs`);
    assert.deepEqual(session.parent, { sessionId: parent, name: 'docs' });
    assert.equal(session.task, 'handle docs');
    assert.equal(session.turn, 2);

    const listed = await bed.client.list({ open: true });
    const mine = listed.filter((s) => s.id === parent || s.parent === parent);
    assert.equal(mine.length, 4);
    assert.ok(mine.every((s) => s.status === 'running'));
    assert.deepEqual(mine.find((s) => s.id === `${parent}/lint`)?.counts, { pending: 0, in_progress: 0, completed: 2 });

    // Closing the parent closes its open subagents first; each reports its final counts.
    const closed = await bed.client.close(parent);
    assert.equal(closed.closed, true);
    assert.equal(closed.children.length, 3);
    for (const child of closed.children) {
      assert.equal(child.closed, true, `${child.name} reported closing`);
      assert.deepEqual(child.counts, { pending: 0, in_progress: 0, completed: 2 });
    }
    const afterClose = await treeWhen(parent, (t) => t.children.every((c) => c.closed));
    assert.equal(afterClose.closed, true);
    const full = await bed.client.tree(parent, { full: true });
    assert.deepEqual(full.children.find((c) => c.id === `${parent}/tests`)?.todos, [todo('tests step 1', 'completed'), todo('tests step 2', 'completed')]);

    const all = await bed.client.list();
    const closedNow = all.filter((s) => s.id === parent || s.parent === parent);
    assert.equal(closedNow.length, 4);
    assert.ok(closedNow.every((s) => s.status === 'closed'), JSON.stringify(closedNow));
    assert.equal((await bed.client.list({ open: true })).filter((s) => s.id === parent || s.parent === parent).length, 0);
  });

  test('a subagent that closes on its own shows its final counts in the parent', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    const { sessionId } = await bed.client.spawnSubagent(parent, { name: 'worker-1' });
    await bed.client.todoWrite(sessionId, { todos: [todo('only step', 'completed')] });
    await bed.client.close(sessionId);
    const deadline = Date.now() + 10_000;
    let child = (await bed.client.session(parent)).children[0];
    while (child?.closed !== true && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      child = (await bed.client.session(parent)).children[0];
    }
    assert.deepEqual(child, { name: 'worker-1', sessionId, task: null, closed: true, counts: { pending: 0, in_progress: 0, completed: 1 } });
    assert.equal((await bed.client.session(parent)).closed, false, 'the parent keeps running');
  });

  test('a tree queries only its root: each subagent is summarized from visibility, its todos in progress included', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    const working = await bed.client.spawnSubagent(parent, { name: 'working' });
    await bed.client.spawnSubagent(parent, { name: 'idle' });
    const long = 'x'.repeat(250);
    await bed.client.todoWrite(working.sessionId, { todos: [todo('Read the diff', 'completed'), todo('Comment on it', 'in_progress'), todo(long, 'in_progress'), todo('Approve')] });
    const { sessionId: nested } = await bed.client.spawnSubagent(working.sessionId, { name: 'nested' });
    await bed.client.todoWrite(nested, { todos: [todo('Deep step', 'in_progress')] });

    await withSessionReads(async (read) => {
      const tree = await treeWhen(parent, (t) => t.children[0]?.version === 2 && t.children[0]?.children[0]?.version === 1 && t.children.length === 2);
      read.length = 0;
      const again = await bed.client.tree(parent);
      assert.deepEqual(read, [parent], 'the root is the only session queried');
      assert.deepEqual(again, tree);
      const [first, second] = tree.children;
      assert.equal(first?.name, 'working');
      assert.deepEqual(first?.counts, { pending: 1, in_progress: 2, completed: 1 });
      assert.deepEqual(first?.inProgressContent, ['Comment on it', `${'x'.repeat(199)}…`], 'a long content is cut to 200 characters');
      assert.equal(first?.subagents, 1);
      assert.equal(first?.todos, undefined);
      assert.deepEqual(first?.children.map((c) => [c.id, c.inProgressContent]), [[nested, ['Deep step']]], 'the level below is one more visibility call');
      assert.deepEqual([second?.name, second?.counts, second?.inProgressContent, second?.subagents], ['idle', { pending: 0, in_progress: 0, completed: 0 }, [], 0]);
    });
  });

  test('a full tree reads every open subagent on each call and a closed one once', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    const done = await bed.client.spawnSubagent(parent, { name: 'done' });
    const open = await bed.client.spawnSubagent(parent, { name: 'open' });
    await bed.client.todoWrite(done.sessionId, { todos: [todo('finished step', 'completed')] });
    await bed.client.close(done.sessionId);
    await bed.client.todoWrite(open.sessionId, { todos: [todo('first plan', 'in_progress')] });
    const final = await bed.client.session(done.sessionId);
    // The listing must show the closed subagent at its final version before the tree can trust it.
    await treeWhen(parent, (t) => t.children.some((c) => c.id === done.sessionId && c.closed && c.version === final.version));
    await bed.client.tree(parent, { full: true });

    await withSessionReads(async (read) => {
      await bed.client.todoWrite(open.sessionId, { todos: [todo('first plan', 'completed'), todo('second plan', 'in_progress')] });
      const tree = await bed.client.tree(parent, { full: true });
      assert.deepEqual(read.sort(), [parent, open.sessionId].sort(), 'the closed subagent was not queried again');
      assert.deepEqual(tree.children.map((c) => [c.name, c.closed]), [['done', true], ['open', false]]);
      assert.deepEqual(tree.children[0]?.todos, [todo('finished step', 'completed')]);
      assert.deepEqual(tree.children[1]?.todos, [todo('first plan', 'completed'), todo('second plan', 'in_progress')], 'the open subagent is read live');
      assert.deepEqual(tree.children[1]?.inProgressContent, ['second plan']);
      assert.deepEqual(tree.children[1]?.counts, { pending: 0, in_progress: 1, completed: 1 }, 'a read subagent shows the counts of the list it was read with');
    });
  });

  test('the first tree after a spawn shows the subagent, whether visibility shows it yet or not (then it is read from the session)', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    const { sessionId } = await bed.client.spawnSubagent(parent, { name: 'fresh' });
    await bed.client.todoWrite(sessionId, { todos: [todo('Just started', 'in_progress')] });
    // The first tree after the spawn: whether visibility shows the child yet or not, it is there.
    const tree = await bed.client.tree(parent);
    assert.deepEqual(tree.children.map((c) => c.id), [sessionId]);
  });

  test('a spawn with a taken or malformed name is refused before it reaches history', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    await bed.client.spawnSubagent(parent, { name: 'a' });
    await assertRejected(bed.client.spawnSubagent(parent, { name: 'a' }), 'subagent-exists', /already has a subagent named "a"/);
    await assertRejected(bed.client.spawnSubagent(parent, { name: '' }), 'subagent-name', /name must be/);
    await assertRejected(bed.client.spawnSubagent(parent, { name: 'has space' }), 'subagent-name', /"has space"/);
    await assertRejected(bed.client.spawnSubagent(parent, { name: 'b', extra: 1 } as never), 'subagent-name', /"extra"/);
    assert.equal(countAcceptedUpdates(await bed.client.exportHistory(parent), subagentSpawnUpdate.name), 1);
    assert.equal((await bed.client.session(parent)).children.length, 1);
  });

  test('the CLI spawns, draws the tree as text and JSON, and lists sessions', async () => {
    const env = { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
    const parent = uniqueId('cli-parent');
    assert.equal((await runCli(['start', parent], { env })).code, 0);
    const spawned = await runCli(['spawn', parent, 'reviewer', '--task', 'review the diff'], { env });
    assert.equal(spawned.code, 0, spawned.stderr);
    assert.equal(spawned.stdout.trim(), `${parent}/reviewer`);
    await runCli(['write', `${parent}/reviewer`, '--json', JSON.stringify({ todos: [todo('Read diff', 'completed'), todo('Comment', 'in_progress')] })], { env });

    await treeWhen(parent, (t) => t.children[0]?.version === 1);
    const json = await runCli(['tree', parent, '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    const root = await bed.client.session(parent);
    const reviewer = await bed.client.session(`${parent}/reviewer`);
    const summary = {
      id: `${parent}/reviewer`,
      name: 'reviewer',
      counts: { pending: 0, in_progress: 1, completed: 1 },
      closed: false,
      version: 1,
      updatedAt: reviewer.updatedAt,
      inProgressContent: ['Comment'],
      subagents: 0,
      children: [],
    };
    const head = { id: parent, name: null, todos: null, counts: { pending: 0, in_progress: 0, completed: 0 }, closed: false, version: 1, updatedAt: root.updatedAt, inProgressContent: [], subagents: 1 };
    assert.deepEqual(JSON.parse(json.stdout), { ...head, children: [summary], nextPageToken: null });
    const full = await runCli(['tree', parent, '--full', '--json'], { env });
    assert.equal(full.code, 0, full.stderr);
    assert.deepEqual(JSON.parse(full.stdout), { ...head, children: [{ ...summary, todos: [todo('Read diff', 'completed'), todo('Comment', 'in_progress')] }], nextPageToken: null });
    const text = await runCli(['tree', parent], { env });
    assert.match(text.stdout, new RegExp(`${parent}: 0 pending, 0 in progress, 0 completed`));
    assert.match(text.stdout, /└─ .*\/reviewer: 0 pending, 1 in progress, 1 completed\n\s+\[>\] Comment\n?$/);
    const fullText = await runCli(['tree', parent, '--full'], { env });
    assert.match(fullText.stdout, /└─ .*\/reviewer: 0 pending, 1 in progress, 1 completed\n\s+\[x\] Read diff\n\s+\[>\] Comment/);

    const list = await runCli(['list', '--open', '--json'], { env });
    assert.equal(list.code, 0, list.stderr);
    const rows = JSON.parse(list.stdout) as Array<{ id: string; parent: string | null; status: string }>;
    assert.deepEqual(rows.find((r) => r.id === `${parent}/reviewer`)?.parent, parent);
    const table = await runCli(['list'], { env });
    assert.match(table.stdout, /^SESSION\s+STATUS\s+PARENT\s+PENDING\s+IN PROGRESS\s+COMPLETED\s+VERSION\s+UPDATED/);
  });
});
