import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertRejected, countAcceptedUpdates, replaySession, runCli, startWorker, todo, uniqueId, useTestBed } from '../helpers';

const bed = useTestBed('idempotency', { allowParallelInProgress: false }, { client: { continueAsNewAfter: 10 } });
const { taskQueue } = bed;

test('a write retried with the same update id is applied once: twice at once, after a worker restart, and after a continue-as-new', async () => {
  const id = uniqueId('retry');
  const first = await bed.client.todoWrite(id, { todos: [todo('once', 'in_progress')] }, { updateId: 'write-1' });
  const [again, concurrent] = await Promise.all([
    bed.client.todoWrite(id, { todos: [todo('a different list')] }, { updateId: 'write-1' }),
    bed.client.todoWrite(id, { todos: [todo('yet another')] }, { updateId: 'write-1' }),
  ]);
  assert.deepEqual(again, first, 'the retry answers the first call\'s result');
  assert.deepEqual(concurrent, first);

  await bed.worker.stop();
  bed.worker = await startWorker({ allowParallelInProgress: false }, taskQueue);
  assert.deepEqual(await bed.client.todoWrite(id, { todos: [todo('after restart')] }, { updateId: 'write-1' }), first);

  // Push the session into a new run; Temporal's own deduplication stops at the run boundary.
  for (let i = 0; i < 12; i++) await bed.client.todoWrite(id, { todos: [todo(`filler ${i}`)] });
  const history = await bed.client.exportHistory(id);
  assert.ok('runs' in history && history.runs.length >= 2, 'the session continued as new');
  assert.deepEqual(await bed.client.todoWrite(id, { todos: [todo('after continue-as-new')] }, { updateId: 'write-1' }), first);

  const session = await bed.client.session(id);
  assert.deepEqual(session.todos, [todo('filler 11')]);
  assert.equal(session.version, 13, 'one applied write-1 plus twelve fillers');

  const cli = await runCli(['write', id, '--update-id', 'write-1', '--json', JSON.stringify({ todos: [todo('from the CLI')] })], {
    env: { AGENT_SESSIONS_TASK_QUEUE: taskQueue },
  });
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.stdout.trim(), first.message);
  assert.deepEqual(await bed.client.todos(id), [todo('filler 11')]);
  assert.equal((await replaySession(bed.client, id, { allowParallelInProgress: true })).final.version, 13);
});

test('a write based on a stale version is refused with both versions and leaves nothing in history', async () => {
  const id = uniqueId('stale');
  const base = await bed.client.todoWrite(id, { todos: [todo('v1')] });
  assert.equal(base.version, 1);
  assert.equal((await bed.client.todoWrite(id, { todos: [todo('v2')] }, { expectedVersion: 1 })).version, 2);
  await assertRejected(bed.client.todoWrite(id, { todos: [todo('stale')] }, { expectedVersion: 1 }), 'stale-version', /based on version 1 but the session is at version 2/);

  const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue };
  const stale = await runCli(['write', id, '--expected-version', '0', '--json', JSON.stringify({ todos: [todo('cli stale')] })], { env });
  assert.equal(stale.code, 1);
  assert.match(stale.stderr, /version 0 but the session is at version 2/);
  const fresh = await runCli(['write', id, '--expected-version', '2', '--json', JSON.stringify({ todos: [todo('cli fresh')] })], { env });
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal(countAcceptedUpdates(await bed.client.exportHistory(id)), 3);
  assert.deepEqual(await bed.client.todos(id), [todo('cli fresh')]);
});
