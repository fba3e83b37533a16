import assert from 'node:assert/strict';
import { test } from 'node:test';
import { countAcceptedUpdates, startWorker, todo, uniqueId, useTestBed } from '../helpers';

const bed = useTestBed('restart', { allowParallelInProgress: false });

test('a worker restarted mid-session loses nothing: list, turn, version and history carry on', async () => {
  const id = uniqueId('restart');
  await bed.client.start(id);
  await bed.client.turnStart(id);
  for (let step = 0; step < 5; step++) {
    await bed.client.todoWrite(id, {
      todos: [todo('step one', step > 0 ? 'completed' : 'in_progress'), todo(`step ${step + 2}`, step > 0 ? 'in_progress' : 'pending')],
    });
  }
  const before = await bed.client.session(id);
  await bed.worker.stop();

  // Messages sent while no worker runs wait in Temporal; the new worker applies them.
  await bed.client.turnEnd(id);
  const pendingWrite = bed.client.todoWrite(id, { todos: [todo('after restart', 'completed')] });
  bed.worker = await startWorker({ allowParallelInProgress: false }, bed.taskQueue);
  const written = await pendingWrite;
  assert.equal(written.version, before.version + 2);

  const after = await bed.client.session(id);
  assert.deepEqual(after.todos, [todo('after restart', 'completed')]);
  assert.equal(after.turn, 1);
  assert.equal(after.turnOpen, false);
  assert.equal(countAcceptedUpdates(await bed.client.exportHistory(id)), 6);
});
