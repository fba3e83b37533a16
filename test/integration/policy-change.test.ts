import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertRejected, replaySession, startWorker, todo, uniqueId, useTestBed } from '../helpers';

const bed = useTestBed('policy-change', { allowParallelInProgress: true });

test('a session written under parallel work keeps answering after workers are redeployed with false; only new writes follow the new policy', async () => {
  const id = uniqueId('redeploy');
  const parallel = [todo('Subagent A', 'in_progress'), todo('Subagent B', 'in_progress'), todo('Merge')];

  await bed.client.start(id);
  await bed.client.todoWrite(id, { todos: parallel });
  assert.deepEqual(await bed.client.todos(id), parallel);
  await bed.worker.stop();

  // maxCachedWorkflows 0: the new worker has nothing in memory and must replay the whole history
  // (written under `true`) for every task and query.
  bed.worker = await startWorker({ allowParallelInProgress: false }, bed.taskQueue, { maxCachedWorkflows: 0 });
  assert.deepEqual(await bed.client.todos(id), parallel, 'the two-in-progress list still answers');
  const session = await bed.client.session(id);
  assert.equal(session.counts.in_progress, 2);

  await assertRejected(bed.client.todoWrite(id, { todos: parallel }), 'parallel-in-progress', /got 2/);
  const result = await bed.client.todoWrite(id, {
    todos: [todo('Subagent A', 'completed'), todo('Subagent B', 'in_progress'), todo('Merge')],
  });
  assert.equal(result.message, 'Updated todo list: 1 pending, 1 in progress, 1 completed');
  assert.deepEqual(await bed.client.todos(id), [todo('Subagent A', 'completed'), todo('Subagent B', 'in_progress'), todo('Merge')]);

  const report = await replaySession(bed.client, id, { allowParallelInProgress: false });
  assert.equal(report.final.version, 2);
});
