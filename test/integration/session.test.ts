import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SessionClient, SessionClosedError, SessionNotFoundError } from '../../src/client';
import { foldHistory, runsOf } from '../../src/history/session-history';
import { assertRejected, countAcceptedUpdates, firstTaskWithSignalAndUpdate, runTemporalCli, temporalAddress, todo, uniqueId, useTestBed } from '../helpers';

const bed = useTestBed('session-test', { allowParallelInProgress: false });

describe('todo_write', () => {
  test('an accepted write returns the counts and the render line, and the query answers the list', async () => {
    const id = uniqueId('accept');
    await bed.client.start(id);
    const result = await bed.client.todoWrite(id, {
      todos: [todo('Run lint', 'completed'), todo('Fix errors', 'in_progress'), todo('Re-run lint'), todo('Commit')],
    });
    assert.deepEqual(result, {
      pending: 2,
      in_progress: 1,
      completed: 1,
      message: 'Updated todo list: 2 pending, 1 in progress, 1 completed',
      version: 1,
    });
    assert.deepEqual(await bed.client.todos(id), [
      todo('Run lint', 'completed'),
      todo('Fix errors', 'in_progress'),
      todo('Re-run lint'),
      todo('Commit'),
    ]);
  });

  test('a write replaces the whole list and writing the same list twice gives the same state', async () => {
    const id = uniqueId('replace');
    await bed.client.start(id);
    await bed.client.todoWrite(id, { todos: [todo('a'), todo('b')] });
    await bed.client.todoWrite(id, { todos: [todo('c', 'in_progress')] });
    await bed.client.todoWrite(id, { todos: [todo('c', 'in_progress')] });
    assert.deepEqual(await bed.client.todos(id), [todo('c', 'in_progress')]);
    assert.equal((await bed.client.session(id)).version, 3);
  });

  test('the client trims content before sending, so the stored item holds the trimmed text', async () => {
    const id = uniqueId('trim');
    await bed.client.start(id);
    await bed.client.todoWrite(id, { todos: [todo('  Run lint \n'), todo('\tFix')] });
    assert.deepEqual(await bed.client.todos(id), [todo('Run lint'), todo('Fix')]);
  });

  test('a rejected write leaves nothing in the exported history', async () => {
    const id = uniqueId('reject');
    await bed.client.start(id);
    await bed.client.todoWrite(id, { todos: [todo('only', 'in_progress')] });
    await assertRejected(bed.client.todoWrite(id, { todos: [todo('a', 'in_progress'), todo('b', 'in_progress')] }), 'parallel-in-progress', /got 2/);
    await assertRejected(bed.client.todoWrite(id, { todos: [todo('a'), todo(' a ')] }), 'duplicate-content', /todos\[1\]\.content "a"/);
    await assertRejected(bed.client.todoWrite(id, { todos: [{ content: 'a', status: 'pending', priority: 1 }] }), 'shape', /"priority"/);
    await assertRejected(bed.client.todoWrite(id, { todos: [todo('   ')] }), 'empty-content', /todos\[0\]\.content/);
    await assertRejected(bed.client.todoWrite(id, { todos: [{ content: 'a', status: 'done' }] }), 'shape', /"done"/);
    await assertRejected(bed.client.todoWrite(id, { todos: 'a list' }), 'shape', /todos must be an array/);
    const history = await bed.client.exportHistory(id);
    assert.equal(countAcceptedUpdates(history), 1, 'only the one accepted write is in history');
    assert.deepEqual(await bed.client.todos(id), [todo('only', 'in_progress')]);
    assert.equal((await bed.client.session(id)).version, 1);
  });

  test('the first write to a session that does not exist creates it (update-with-start)', async () => {
    const id = uniqueId('first-write');
    const result = await bed.client.todoWrite(id, { todos: [todo('Plan', 'in_progress')] });
    assert.equal(result.version, 1);
    assert.deepEqual(await bed.client.todos(id), [todo('Plan', 'in_progress')]);
    assert.equal((await bed.client.start(id)).created, false, 'the write started it');
  });

  test('a call that names no session is an error, never a silent no-op, and an unknown session is reported by id', async () => {
    await assert.rejects(bed.client.todoWrite('', { todos: [] }), /session id is required/);
    await assert.rejects(bed.client.todos(uniqueId('missing')), SessionNotFoundError);
    await assert.rejects(bed.client.turnStart(uniqueId('missing')), SessionNotFoundError);
  });
});

describe('turns and closing', () => {
  test('a turn/start and a write waiting together for the first worker are applied as history orders them', async () => {
    // No worker polls this queue yet, so the start, the signal and the update all wait for the
    // session's first workflow task, where the SDK holds them until handlers are registered.
    const taskQueue = uniqueId('first-task');
    const client = await SessionClient.connect({ address: await temporalAddress(), taskQueue });
    const id = uniqueId('first-task');
    try {
      const { written, worker } = await firstTaskWithSignalAndUpdate(client, id, taskQueue);
      try {
        assert.equal(written.version, 2, 'the write comes after turn/start, as in the history');
        const live = await client.todos(id);
        const folded = foldHistory(runsOf(await client.exportHistory(id)), id).final.todos;
        assert.deepEqual(live, [todo('plan', 'completed')]);
        assert.deepEqual(live, folded, 'the session holds the list its history folds to');
      } finally {
        await worker.stop();
      }
    } finally {
      await client.closeConnection();
    }
  });


  test('turn/start clears the list, turn/end keeps it, and the session query follows the turns', async () => {
    const id = uniqueId('turns');
    await bed.client.start(id);
    await bed.client.turnStart(id);
    await bed.client.todoWrite(id, { todos: [todo('plan', 'completed')] });
    await bed.client.turnEnd(id);
    assert.deepEqual(await bed.client.todos(id), [todo('plan', 'completed')], 'the finished list stays visible after turn/end');
    let session = await bed.client.session(id);
    assert.equal(session.turn, 1);
    assert.equal(session.turnOpen, false);
    await bed.client.turnStart(id);
    assert.equal(await bed.client.todos(id), null, 'a new turn starts with no plan');
    session = await bed.client.session(id);
    assert.deepEqual(
      { turn: session.turn, turnOpen: session.turnOpen, todos: session.todos, version: session.version, counts: session.counts },
      { turn: 2, turnOpen: true, todos: null, version: 4, counts: { pending: 0, in_progress: 0, completed: 0 } },
    );
  });

  test('starting a running session succeeds and changes nothing', async () => {
    const id = uniqueId('idempotent-start');
    assert.equal((await bed.client.start(id)).created, true);
    await bed.client.todoWrite(id, { todos: [todo('keep me')] });
    const again = await bed.client.start(id);
    assert.equal(again.created, false);
    assert.deepEqual(await bed.client.todos(id), [todo('keep me')]);
  });

  test('a closed session completes, still answers queries, and refuses writes and turns', async () => {
    const id = uniqueId('close');
    await bed.client.start(id);
    await bed.client.todoWrite(id, { todos: [todo('done', 'completed')] });
    const closed = await bed.client.close(id);
    assert.equal(closed.closed, true);
    const description = await bed.client.temporal.workflow.getHandle(id).describe();
    assert.equal(description.status.name, 'COMPLETED');
    assert.deepEqual(await bed.client.todos(id), [todo('done', 'completed')]);
    assert.equal((await bed.client.session(id)).closed, true);
    await assert.rejects(bed.client.todoWrite(id, { todos: [] }), SessionClosedError);
    await assert.rejects(bed.client.turnStart(id), SessionClosedError);
    await assert.rejects(bed.client.start(id), SessionClosedError);
    assert.equal((await bed.client.close(id)).closed, true, 'closing twice is fine');
  });
});

describe('foreign clients', () => {
  test('a write sent by `temporal workflow update execute` behaves exactly like one from this client', async () => {
    const id = uniqueId('foreign');
    await bed.client.start(id);
    const list = { todos: [todo('From Go', 'in_progress'), todo('Then more')] };
    const ours = uniqueId('ours');
    await bed.client.start(ours);
    const ourResult = await bed.client.todoWrite(ours, list);

    const accepted = await runTemporalCli(['workflow', 'update', 'execute', '-w', id, '--name', 'todo_write', '--input', JSON.stringify(list), '-o', 'json']);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.deepEqual(JSON.parse(accepted.stdout).result, ourResult);
    assert.deepEqual(await bed.client.todos(id), list.todos);

    const bad = { todos: [todo('x', 'in_progress'), todo('y', 'in_progress')] };
    const rejected = await runTemporalCli(['workflow', 'update', 'execute', '-w', id, '--name', 'todo_write', '--input', JSON.stringify(bad)]);
    assert.notEqual(rejected.code, 0);
    assert.match(rejected.stderr, /at most one todo may be in_progress .*got 2/);
    const ourRejection = await assertRejected(bed.client.todoWrite(ours, bad), 'parallel-in-progress');
    assert.ok(rejected.stderr.includes(ourRejection.message), 'the same sentence reaches both clients');
    assert.equal(countAcceptedUpdates(await bed.client.exportHistory(id)), 1);

    const query = await runTemporalCli(['workflow', 'query', '-w', id, '--name', 'todos', '-o', 'json']);
    assert.equal(query.code, 0, query.stderr);
    assert.deepEqual(JSON.parse(query.stdout).queryResult[0], list.todos);

    const signal = await runTemporalCli(['workflow', 'signal', '-w', id, '--name', 'turn/start']);
    assert.equal(signal.code, 0, signal.stderr);
    assert.equal(await bed.client.todos(id), null);
  });

  test('the exported history has the shape `temporal workflow show --output json` prints', async () => {
    const id = uniqueId('show');
    await bed.client.start(id);
    await bed.client.todoWrite(id, { todos: [todo('compare')] });
    await bed.client.turnEnd(id);
    // A closed session's history no longer grows, so the two exports see the same events.
    await bed.client.close(id);
    const ours = await bed.client.exportHistory(id);
    const shown = await runTemporalCli(['workflow', 'show', '-w', id, '--output', 'json']);
    assert.equal(shown.code, 0, shown.stderr);
    // The CLI (1.5.1, the newest `go install` can build) carries older API definitions than server
    // 1.31.0: it drops the fields it does not know (the versioning ones). Everything it prints is
    // ours, value for value; ours may only add fields.
    const extra = assertDeepSubset(JSON.parse(shown.stdout), ours, '$');
    assert.ok(extra.every((path) => /versioning|deploymentversion|workerdeployment|targetworker/i.test(path)), `fields only ours has: ${extra.join(', ')}`);
  });
});

/**
 * Asserts that every value in `part` is in `whole` at the same place (arrays element by element,
 * of the same length); returns the paths of the object fields only `whole` has.
 */
function assertDeepSubset(part: unknown, whole: unknown, path: string): string[] {
  if (Array.isArray(part)) {
    assert.ok(Array.isArray(whole) && whole.length === part.length, `${path}: ${JSON.stringify(whole)?.slice(0, 200)} is not an array of ${part.length}`);
    return part.flatMap((item, i) => assertDeepSubset(item, (whole as unknown[])[i], `${path}[${i}]`));
  }
  if (typeof part === 'object' && part !== null) {
    assert.ok(typeof whole === 'object' && whole !== null, `${path}: expected an object, got ${JSON.stringify(whole)}`);
    const wholeObject = whole as Record<string, unknown>;
    const extra = Object.keys(wholeObject).filter((key) => !(key in part)).map((key) => `${path}.${key}`);
    return [...extra, ...Object.entries(part).flatMap(([key, value]) => assertDeepSubset(value, wholeObject[key], `${path}.${key}`))];
  }
  assert.deepEqual(whole, part, path);
  return [];
}
