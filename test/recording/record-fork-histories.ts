/**
 * Records the history of a fork into test/histories/<prefix>-fork.json, with the workflow code of
 * this checkout and a scripted model: a session plans and works a list, a fork is taken in the
 * middle of that turn (at its second write), and the fork's next message runs the rest of it.
 * The fork's first run starts from the `fork` input; the replay tests hold every later release to
 * it.
 *
 * Run: npx tsx test/recording/record-fork-histories.ts <prefix>
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startModelServer, type ScriptJson } from '../../src/model-server';
import { connectClient, startWorker, turnOf, uniqueId } from '../helpers';

const OUT = join(__dirname, '..', 'histories');

const write = (...items: Array<[string, string]>) => ({ respond: { tool_calls: [{ name: 'todo_write', arguments: { todos: items.map(([content, status]) => ({ content, status })) } }] } });

/** Answers by the number of the model's own messages so far, whatever was said: a fork goes on where it stands. */
const SCRIPT: ScriptJson = {
  model: 'scripted-fork',
  conversations: [
    {
      name: 'fork',
      match: { firstUserMessage: '.' },
      steps: [
        write(['Run lint', 'pending'], ['Fix the errors', 'pending']),
        write(['Run lint', 'in_progress'], ['Fix the errors', 'pending']),
        write(['Run lint', 'completed'], ['Fix the errors', 'in_progress']),
        write(['Run lint', 'completed'], ['Fix the errors', 'completed']),
        { respond: { content: 'Lint is clean.' } },
      ],
    },
  ],
};

async function main(): Promise<void> {
  const prefix = process.argv[2];
  if (!prefix) throw new Error('usage: npx tsx test/recording/record-fork-histories.ts <prefix>');
  const model = await startModelServer({ script: SCRIPT });
  const taskQueue = uniqueId('record-fork');
  const worker = await startWorker({ allowParallelInProgress: false }, taskQueue, { agent: { baseUrl: model.url, model: 'scripted', nudge: false } });
  const client = await connectClient(taskQueue);
  try {
    const source = uniqueId('lint');
    await turnOf(client, source, (await client.sendMessage(source, 'Fix the lint errors')).messageId);
    const [run] = await client.historyRuns(source);
    const events = run!.history.events!;
    const writes = events.flatMap((e, i) => (e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'todo_write' ? [i + 1] : []));
    const fork = await client.fork(source, uniqueId('lint-fork'), { eventId: writes[1]!, runId: run!.runId });
    await turnOf(client, fork.sessionId, (await client.sendMessage(fork.sessionId, 'Go on')).messageId);
    writeFileSync(join(OUT, `${prefix}-fork.json`), `${JSON.stringify(await client.exportHistory(fork.sessionId), null, 2)}\n`);
    process.stdout.write(`wrote ${prefix}-fork.json to ${OUT}\n`);
  } finally {
    await client.closeConnection();
    await worker.stop();
    await model.close();
  }
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
