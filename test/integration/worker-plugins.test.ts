import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { SimplePlugin } from '@temporalio/plugin';
import { todoWriteUpdate } from '../../workflows/messages';
import { createWorker, type SessionWorker } from '../../src/worker';
import { assertRejected, connectClient, temporalAddress, todo, uniqueId } from '../helpers';

const taskQueue = uniqueId('plugins');
let worker: SessionWorker | undefined;
let running: Promise<void> | undefined;

after(async () => {
  worker?.shutdown();
  await running;
});

test("a user's own plugin composes with ours: its workflow interceptor is bundled, and the deployment's policy still judges writes", async () => {
  const userPlugin = new SimplePlugin({
    name: 'user.marking',
    workerInterceptors: { workflowModules: [join(__dirname, '..', 'fixtures', 'marking-interceptors.ts')] },
  });
  worker = await createWorker({ allowParallelInProgress: false, temporal: { address: await temporalAddress(), taskQueue }, plugins: [userPlugin] });
  running = worker.run();
  await worker.registered();
  const client = await connectClient(taskQueue);
  try {
    const id = uniqueId('composed');
    await client.todoWrite(id, { todos: [todo('One', 'in_progress')] });
    const answer = await client.temporal.workflow.getHandle(id).query<unknown>('todos');
    assert.deepEqual(answer, { markedByUserPlugin: true, answer: [todo('One', 'in_progress')] });
    await assertRejected(client.todoWrite(id, { todos: [todo('a', 'in_progress'), todo('b', 'in_progress')] }), 'parallel-in-progress');
    // The user's plugin changes nothing the wire contract promises.
    assert.equal(todoWriteUpdate.name, 'todo_write');
  } finally {
    await client.closeConnection();
  }
});
