/**
 * Records histories of the agent loop into test/histories/<prefix>-agent-*.json, with the
 * workflow code of this checkout and the bundled scripted model: a subagent fan-out (the
 * parent's history and each child's) and a correction after a rejected write. The replay tests
 * hold every later release to them.
 *
 * Run: npx tsx test/recording/record-agent-histories.ts <prefix>
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ExportedHistory } from '../../src/history';
import { bundledScriptFile, startModelServer } from '../../src/model-server';
import type { TodoPolicy } from '../../src/todo';
import { connectClient, startWorker, turnOf, uniqueId } from '../helpers';

const OUT = join(__dirname, '..', 'histories');

async function record(script: 'subagents' | 'rejected-write', policy: TodoPolicy, text: string): Promise<Record<string, ExportedHistory>> {
  const model = await startModelServer({ scriptFile: bundledScriptFile(script) });
  const taskQueue = uniqueId(`record-${script}`);
  const worker = await startWorker(policy, taskQueue, { agent: { baseUrl: model.url, model: 'scripted' } });
  const client = await connectClient(taskQueue);
  try {
    const id = uniqueId(script);
    const { messageId } = await client.sendMessage(id, text);
    await turnOf(client, id, messageId);
    const out: Record<string, ExportedHistory> = { [script]: await client.exportHistory(id) };
    for (const child of (await client.session(id)).children) out[`${script}.${child.name}`] = await client.exportHistory(child.sessionId);
    return out;
  } finally {
    await client.closeConnection();
    await worker.stop();
    await model.close();
  }
}

async function main(): Promise<void> {
  const prefix = process.argv[2];
  if (!prefix) throw new Error('usage: npx tsx test/recording/record-agent-histories.ts <prefix>');
  const histories = {
    ...(await record('subagents', { allowParallelInProgress: true }, 'Update the tests and the docs for the --verbose flag')),
    ...(await record('rejected-write', { allowParallelInProgress: false }, 'Fix the lint errors, one step at a time')),
  };
  for (const [name, history] of Object.entries(histories)) writeFileSync(join(OUT, `${prefix}-agent-${name}.json`), `${JSON.stringify(history, null, 2)}\n`);
  process.stdout.write(`wrote ${Object.keys(histories).length} histories to ${OUT}\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
