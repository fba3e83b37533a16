import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { SessionClient } from '../../src/client';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import { connectClient, replaySession, spawnCli, todo, uniqueId } from '../helpers';

const taskQueue = uniqueId('agent-durable');
const TASK = 'Ship the fix, and have a helper check it';
const HELP = 'Check the fix';

const write = (todos: Array<{ content: string; status: string }>) => ({ tool_calls: [{ name: 'todo_write', arguments: { todos } }] });
// The parent's second model call and the helper's only one are slow: the worker is killed while each is in flight.
const script: ScriptJson = {
  description: 'A turn whose worker dies twice: once during a model call, once while a subagent runs.',
  policy: { allowParallelInProgress: true },
  conversations: [
    {
      name: 'parent',
      match: { firstUserMessage: TASK },
      steps: [
        { respond: write([todo('Write the fix', 'in_progress'), todo('Have it checked')]) },
        { respond: { ...write([todo('Write the fix', 'completed'), todo('Have it checked', 'in_progress')]), delayMs: 4000 } },
        { respond: { tool_calls: [{ name: 'spawn_subagent', arguments: { name: 'checker', task: HELP } }] } },
        { expect: { lastMessage: { role: 'tool', contentMatches: 'The fix is right' } }, respond: write([todo('Write the fix', 'completed'), todo('Have it checked', 'completed')]) },
        { respond: { content: 'Shipped, and checked.' } },
      ],
    },
    {
      name: 'checker',
      match: { firstUserMessage: HELP },
      steps: [{ respond: { content: 'The fix is right.', delayMs: 4000 } }],
    },
  ],
} as ScriptJson;

let model: ModelServer;
let client: SessionClient;
const workers: Array<Awaited<ReturnType<typeof spawnCli>>> = [];

async function startWorkerProcess(): Promise<Awaited<ReturnType<typeof spawnCli>>> {
  const worker = await spawnCli(['worker', '--allow-parallel-in-progress', 'true'], {
    AGENT_SESSIONS_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.url,
    AGENT_SESSIONS_MODEL: 'scripted',
  });
  workers.push(worker);
  // Polling once it says so (bundling the workflow code can take seconds after a build).
  for (let i = 0; i < 600 && !/worker polling task queue/.test(worker.output()); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.match(worker.output(), /worker polling task queue/);
  return worker;
}

before(async () => {
  model = await startModelServer({ script });
  client = await connectClient(taskQueue);
});

after(async () => {
  for (const worker of workers) worker.child.kill('SIGKILL');
  await client.closeConnection();
  await model.close();
});

/** `waiting`, or its failure with what the workers printed and the session's pending activities appended: a wait that times out says why. */
async function explained<T>(waiting: Promise<T>, id: string): Promise<T> {
  try {
    return await waiting;
  } catch (error) {
    const pending = await client.temporal.workflow
      .getHandle(id)
      .describe()
      .then((d) => JSON.stringify(d.raw.pendingActivities ?? []), (e: Error) => `(describe failed: ${e.message})`);
    const outputs = workers.map((w, k) => `--- worker ${k + 1}:\n${w.output()}`).join('\n');
    throw new Error(`${(error as Error).message}\npending activities: ${pending}\n${outputs}`);
  }
}

test('a worker killed during a model call and again while a subagent runs: the turn finishes within a minute of each restart, and no model call that completed is made again', async () => {
  const id = uniqueId('durable');
  const first = await startWorkerProcess();
  const sent = await client.sendMessage(id, TASK);

  await model.waitForRequest((r) => r.conversation === 'parent' && r.step === 1 && r.inFlight, { timeoutMs: 60_000 });
  first.child.kill('SIGKILL');
  await first.exited;
  const restarted = Date.now();
  const second = await startWorkerProcess();
  // The call that died with the worker is made again on the new one, within seconds.
  await explained(model.waitForRequest((r) => r.conversation === 'parent' && r.step === 1 && r.completed, { timeoutMs: 60_000 }), id);
  const retriedAfterMs = Date.now() - restarted;

  await explained(model.waitForRequest((r) => r.conversation === 'checker' && r.step === 0 && r.inFlight, { timeoutMs: 60_000 }), id);
  second.child.kill('SIGKILL');
  await second.exited;
  const restartedAgain = Date.now();
  await startWorkerProcess();

  let outcome = (await client.session(id)).agent.lastTurn;
  while (outcome?.messageId !== sent.messageId) {
    assert.ok(Date.now() - restartedAgain < 60_000, 'the turn finished within a minute of the last restart');
    await new Promise((resolve) => setTimeout(resolve, 250));
    outcome = (await client.session(id)).agent.lastTurn;
  }
  const finishedAfterMs = Date.now() - restartedAgain;
  assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
  assert.equal(outcome.answer, 'Shipped, and checked.');
  assert.deepEqual(await client.todos(id), [todo('Write the fix', 'completed'), todo('Have it checked', 'completed')]);

  // Counting at the model server: every step answered completely exactly once.
  const completed = new Map<string, number>();
  for (const r of model.requests()) {
    if (r.completed) completed.set(`${r.conversation}#${r.step}`, (completed.get(`${r.conversation}#${r.step}`) ?? 0) + 1);
  }
  assert.deepEqual(
    [...completed].sort(),
    [['checker#0', 1], ['parent#0', 1], ['parent#1', 1], ['parent#2', 1], ['parent#3', 1], ['parent#4', 1]],
    JSON.stringify(model.requests()),
  );
  const abandoned = model.requests().filter((r) => !r.completed).map((r) => `${r.conversation}#${r.step}`);
  assert.deepEqual(abandoned.sort(), ['checker#0', 'parent#1'], 'the two calls in flight at the kills were the only ones cut off');

  for (const policy of [{ allowParallelInProgress: true }, { allowParallelInProgress: false }]) {
    assert.equal((await replaySession(client, id, policy)).final.closed, false);
    assert.equal((await replaySession(client, `${id}/checker`, policy)).final.closed, true);
  }
  console.error(`a killed model call was made again ${retriedAfterMs} ms after the new worker started; the turn finished ${finishedAfterMs} ms after the last restart`);
});
