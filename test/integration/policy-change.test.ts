import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { SessionClient } from '../../src/client';
import { assertRejected, connectClient, replaySession, startWorker, todo, uniqueId, type TestWorker } from '../helpers';

const taskQueue = uniqueId('policy-change');
let client: SessionClient | undefined;
let worker: TestWorker | undefined;

after(async () => {
  await client?.closeConnection();
  await worker?.stop();
});

test('a session written under parallel work keeps answering after workers are redeployed with false; only new writes follow the new policy', async () => {
  client = await connectClient(taskQueue);
  const id = uniqueId('redeploy');
  const parallel = [todo('Subagent A', 'in_progress'), todo('Subagent B', 'in_progress'), todo('Merge')];

  worker = await startWorker({ allowParallelInProgress: true }, taskQueue);
  await client.start(id);
  await client.todoWrite(id, { todos: parallel });
  assert.deepEqual(await client.todos(id), parallel);
  await worker.stop();

  // maxCachedWorkflows 0: the new worker has nothing in memory and must replay the whole history
  // (written under `true`) for every task and query.
  worker = await startWorker({ allowParallelInProgress: false }, taskQueue, { maxCachedWorkflows: 0 });
  assert.deepEqual(await client.todos(id), parallel, 'the two-in-progress list still answers');
  const session = await client.session(id);
  assert.equal(session.counts.in_progress, 2);

  await assertRejected(client.todoWrite(id, { todos: parallel }), 'parallel-in-progress', /got 2/);
  const result = await client.todoWrite(id, {
    todos: [todo('Subagent A', 'completed'), todo('Subagent B', 'in_progress'), todo('Merge')],
  });
  assert.equal(result.message, 'Updated todo list: 1 pending, 1 in progress, 1 completed');
  assert.deepEqual(await client.todos(id), [todo('Subagent A', 'completed'), todo('Subagent B', 'in_progress'), todo('Merge')]);

  const report = await replaySession(client, id, { allowParallelInProgress: false });
  assert.equal(report.final.version, 2);
});
