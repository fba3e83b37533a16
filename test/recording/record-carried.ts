/**
 * Records the state a release's sessions carry across continue-as-new, for the next release's
 * test that it accepts them (test/unit/carried-fixtures.test.ts). Run it with the release being
 * recorded checked out, against a running server:
 *
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 npx tsx test/recording/record-carried.ts test/fixtures/carried/<release>.json
 *
 * It drives one session the way users do (an agent turn against the scripted `lint-fix` model,
 * with its todo writes, a subagent, an ignored signal, more writes) until it continues as new,
 * and writes the input of every continued run: `[{ sessionId, parentWorkflowId?, input }]`.
 */
import { writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { SessionClient } from '../../src/client';
import { runInputOf, runsOf } from '../../src/history';
import { bundledScriptFile, startModelServer } from '../../src/model-server';
import { createWorker } from '../../src/worker';

async function main(): Promise<void> {
  const out = process.argv[2];
  if (out === undefined) throw new Error('usage: record-carried.ts <output.json>');
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const taskQueue = `record-carried-${randomUUID().slice(0, 8)}`;
  const model = await startModelServer({ scriptFile: bundledScriptFile('lint-fix') });
  const worker = await createWorker({ allowParallelInProgress: false, temporal: { address, taskQueue }, agent: { baseUrl: model.url, apiKey: () => 'sk-record' } });
  const running = worker.run();
  const client = await SessionClient.connect({ address, taskQueue, continueAsNewAfter: 10 });
  const connection = await Connection.connect({ address });
  const temporal = new Client({ connection });
  const id = `carried-${randomUUID().slice(0, 8)}`;
  try {
    await client.sendMessage(id, 'Fix the lint errors');
    for (let i = 0; i < 600; i++) {
      const s = await client.session(id);
      if (s.agent.lastTurn !== null && s.agent.activity.state === 'idle' && !s.turnOpen) break;
      await sleep(100);
    }
    await client.spawnSubagent(id, { name: 'helper', task: 'look around' });
    await temporal.workflow.getHandle(id).signal('todo_write', { todos: [] });
    for (let i = 0; i < 12; i++) {
      await client.todoWrite(id, { todos: [{ content: `step ${i}`, status: 'in_progress' }, { content: 'later', status: 'pending' }] });
    }
    await sleep(1000);
    const runs = runsOf(await client.exportHistory(id));
    const carried = runs.slice(1).map((run) => ({ sessionId: id, input: runInputOf(run) }));
    if (carried.length === 0) throw new Error(`session ${id} did not continue as new`);
    writeFileSync(out, `${JSON.stringify(carried, null, 2)}\n`);
    process.stderr.write(`wrote ${carried.length} carried input(s) of session ${id} to ${out}\n`);
    await client.close(id);
  } finally {
    await client.closeConnection();
    await connection.close();
    worker.shutdown();
    await running;
    await model.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
