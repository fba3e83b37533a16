import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import type { SessionClient } from '../../src/client';
import { connectClient, countAcceptedUpdates, startWorker, todo, uniqueId, type TestWorker } from '../helpers';

const taskQueue = uniqueId('restart');
let client: SessionClient | undefined;
let worker: TestWorker | undefined;

after(async () => {
  await client?.closeConnection();
  await worker?.stop();
});

test('a worker restarted mid-session loses nothing: list, turn, version and history carry on', async () => {
  client = await connectClient(taskQueue);
  const id = uniqueId('restart');
  worker = await startWorker({ allowParallelInProgress: false }, taskQueue);
  await client.start(id);
  await client.turnStart(id);
  for (let step = 0; step < 5; step++) {
    await client.todoWrite(id, {
      todos: [todo('step one', step > 0 ? 'completed' : 'in_progress'), todo(`step ${step + 2}`, step > 0 ? 'in_progress' : 'pending')],
    });
  }
  const before = await client.session(id);
  await worker.stop();

  // Messages sent while no worker runs wait in Temporal; the new worker applies them.
  await client.turnEnd(id);
  const pendingWrite = client.todoWrite(id, { todos: [todo('after restart', 'completed')] });
  worker = await startWorker({ allowParallelInProgress: false }, taskQueue);
  const written = await pendingWrite;
  assert.equal(written.version, before.version + 2);

  const after = await client.session(id);
  assert.deepEqual(after.todos, [todo('after restart', 'completed')]);
  assert.equal(after.turn, 1);
  assert.equal(after.turnOpen, false);
  assert.equal(countAcceptedUpdates(await client.exportHistory(id)), 6);
});
