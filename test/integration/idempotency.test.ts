import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SessionClient } from '../../src/client';
import { assertRejected, countAcceptedUpdates, replaySession, runCli, startWorker, temporalAddress, todo, uniqueId, type TestWorker } from '../helpers';

const taskQueue = uniqueId('idempotency');
let worker: TestWorker | undefined;
let client: SessionClient | undefined;

after(async () => {
  await client?.closeConnection();
  await worker?.stop();
});

test('a write retried with the same update id is applied once: twice at once, after a worker restart, and after a continue-as-new', async () => {
  worker = await startWorker({ allowParallelInProgress: false }, taskQueue);
  client = await SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 10 });
  const id = uniqueId('retry');
  const first = await client.todoWrite(id, { todos: [todo('once', 'in_progress')] }, { updateId: 'write-1' });
  const [again, concurrent] = await Promise.all([
    client.todoWrite(id, { todos: [todo('a different list')] }, { updateId: 'write-1' }),
    client.todoWrite(id, { todos: [todo('yet another')] }, { updateId: 'write-1' }),
  ]);
  assert.deepEqual(again, first, 'the retry answers the first call\'s result');
  assert.deepEqual(concurrent, first);

  await worker.stop();
  worker = await startWorker({ allowParallelInProgress: false }, taskQueue);
  assert.deepEqual(await client.todoWrite(id, { todos: [todo('after restart')] }, { updateId: 'write-1' }), first);

  // Push the session into a new run; Temporal's own deduplication stops at the run boundary.
  for (let i = 0; i < 12; i++) await client.todoWrite(id, { todos: [todo(`filler ${i}`)] });
  const history = await client.exportHistory(id);
  assert.ok('runs' in history && history.runs.length >= 2, 'the session continued as new');
  assert.deepEqual(await client.todoWrite(id, { todos: [todo('after continue-as-new')] }, { updateId: 'write-1' }), first);

  const session = await client.session(id);
  assert.deepEqual(session.todos, [todo('filler 11')]);
  assert.equal(session.version, 13, 'one applied write-1 plus twelve fillers');

  const cli = await runCli(['write', id, '--update-id', 'write-1', '--json', JSON.stringify({ todos: [todo('from the CLI')] })], {
    env: { AGENT_SESSIONS_TASK_QUEUE: taskQueue },
  });
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.stdout.trim(), first.message);
  assert.deepEqual(await client.todos(id), [todo('filler 11')]);
  assert.equal((await replaySession(client, id, { allowParallelInProgress: true })).final.version, 13);
});

test('a write based on a stale version is refused with both versions and leaves nothing in history', async () => {
  worker ??= await startWorker({ allowParallelInProgress: false }, taskQueue);
  client ??= await SessionClient.connect({ address: await temporalAddress(), taskQueue });
  const id = uniqueId('stale');
  const base = await client.todoWrite(id, { todos: [todo('v1')] });
  assert.equal(base.version, 1);
  assert.equal((await client.todoWrite(id, { todos: [todo('v2')] }, { expectedVersion: 1 })).version, 2);
  await assertRejected(client.todoWrite(id, { todos: [todo('stale')] }, { expectedVersion: 1 }), 'stale-version', /based on version 1 but the session is at version 2/);

  const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue };
  const stale = await runCli(['write', id, '--expected-version', '0', '--json', JSON.stringify({ todos: [todo('cli stale')] })], { env });
  assert.equal(stale.code, 1);
  assert.match(stale.stderr, /version 0 but the session is at version 2/);
  const fresh = await runCli(['write', id, '--expected-version', '2', '--json', JSON.stringify({ todos: [todo('cli fresh')] })], { env });
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.equal(countAcceptedUpdates(await client.exportHistory(id)), 3);
  assert.deepEqual(await client.todos(id), [todo('cli fresh')]);
});
