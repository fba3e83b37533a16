import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { subagentSpawnUpdate } from '../../workflows/messages';
import { assertRejected, countAcceptedUpdates, runCli, todo, uniqueId, useTestBed } from '../helpers';

const bed = useTestBed('subagents', { allowParallelInProgress: true });

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

    const tree = await bed.client.tree(parent);
    assert.equal(tree.id, parent);
    assert.deepEqual(tree.counts, { pending: 0, in_progress: 3, completed: 0 });
    assert.deepEqual(tree.children.map((c) => c.id).sort(), children.map((c) => c.sessionId).sort());
    for (const child of tree.children) {
      assert.deepEqual(child.counts, { pending: 0, in_progress: 0, completed: 2 });
      assert.equal(child.closed, false);
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
    const afterClose = await bed.client.tree(parent);
    assert.equal(afterClose.closed, true);
    assert.ok(afterClose.children.every((c) => c.closed));
    assert.deepEqual(afterClose.children.find((c) => c.id === `${parent}/tests`)?.todos, [todo('tests step 1', 'completed'), todo('tests step 2', 'completed')]);

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

  test('a tree reads a closed subagent once and an open one on every call', async () => {
    const parent = uniqueId('parent');
    await bed.client.start(parent);
    const done = await bed.client.spawnSubagent(parent, { name: 'done' });
    const open = await bed.client.spawnSubagent(parent, { name: 'open' });
    await bed.client.todoWrite(done.sessionId, { todos: [todo('finished step', 'completed')] });
    await bed.client.close(done.sessionId);
    await bed.client.todoWrite(open.sessionId, { todos: [todo('first plan', 'in_progress')] });
    const final = await bed.client.session(done.sessionId);
    // The listing must show the closed subagent at its final version before the tree can trust it.
    const deadline = Date.now() + 10_000;
    const listed = async () => (await bed.client.list({ parent })).find((s) => s.id === done.sessionId);
    while ((await listed())?.version !== final.version || (await listed())?.status !== 'closed') {
      assert.ok(Date.now() < deadline, `the listing never showed ${done.sessionId} closed at version ${final.version}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await bed.client.tree(parent);

    const read: string[] = [];
    const session = bed.client.session.bind(bed.client);
    bed.client.session = async (id: string) => {
      read.push(id);
      return session(id);
    };
    try {
      await bed.client.todoWrite(open.sessionId, { todos: [todo('first plan', 'completed'), todo('second plan', 'in_progress')] });
      const tree = await bed.client.tree(parent);
      assert.deepEqual(read.sort(), [parent, open.sessionId].sort(), 'the closed subagent was not queried again');
      assert.deepEqual(tree.children.map((c) => [c.name, c.closed]), [['done', true], ['open', false]]);
      assert.deepEqual(tree.children[0]?.todos, [todo('finished step', 'completed')]);
      assert.deepEqual(tree.children[1]?.todos, [todo('first plan', 'completed'), todo('second plan', 'in_progress')], 'the open subagent is read live');
    } finally {
      bed.client.session = session;
    }
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

    const json = await runCli(['tree', parent, '--json'], { env });
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), {
      id: parent,
      todos: null,
      counts: { pending: 0, in_progress: 0, completed: 0 },
      children: [
        {
          id: `${parent}/reviewer`,
          todos: [todo('Read diff', 'completed'), todo('Comment', 'in_progress')],
          counts: { pending: 0, in_progress: 1, completed: 1 },
          children: [],
        },
      ],
    });
    const text = await runCli(['tree', parent], { env });
    assert.match(text.stdout, new RegExp(`${parent}: 0 pending, 0 in progress, 0 completed`));
    assert.match(text.stdout, /└─ .*\/reviewer: 0 pending, 1 in progress, 1 completed\n\s+\[x\] Read diff\n\s+\[>\] Comment/);

    const list = await runCli(['list', '--open', '--json'], { env });
    assert.equal(list.code, 0, list.stderr);
    const rows = JSON.parse(list.stdout) as Array<{ id: string; parent: string | null; status: string }>;
    assert.deepEqual(rows.find((r) => r.id === `${parent}/reviewer`)?.parent, parent);
    const table = await runCli(['list'], { env });
    assert.match(table.stdout, /^SESSION\s+STATUS\s+PARENT\s+PENDING\s+IN PROGRESS\s+COMPLETED\s+VERSION\s+UPDATED/);
  });
});
