/**
 * Records test/histories/<prefix>-first-task-signal-and-update.json with the workflow code of this
 * checkout: a session started with no worker polling, then a `turn/start` Signal and a
 * `todo_write` Update sent while it waits, so both reach the session in its first workflow task.
 * The history orders the signal first; the session must apply it first (the
 * `signals-in-history-order` patch), and the replay tests hold every later release to it.
 *
 * Run: npx tsx test/recording/record-first-task-histories.ts <prefix>
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionClient } from '../../src/client';
import { firstTaskWithSignalAndUpdate, temporalAddress, uniqueId } from '../helpers';

const OUT = join(__dirname, '..', 'histories');

async function main(): Promise<void> {
  const prefix = process.argv[2];
  if (!prefix) throw new Error('usage: npx tsx test/recording/record-first-task-histories.ts <prefix>');
  const taskQueue = uniqueId('record-first-task');
  // The worker starts after the write is sent, and on a busy machine takes longer than the client's default wait before it asks why.
  const client = await SessionClient.connect({ address: await temporalAddress(), taskQueue, diagnoseAfterMs: 60_000 });
  const id = uniqueId('first-task');
  try {
    // A second for the update to wait at the server beside the signal before a worker polls.
    const { written, worker } = await firstTaskWithSignalAndUpdate(client, id, taskQueue, 1000);
    try {
      if (written.version !== 2) throw new Error(`the write was applied at version ${written.version}, not after turn/start (2): this checkout lacks the patch`);
      const [run] = await client.historyRuns(id);
      const events = run!.history.events ?? [];
      const firstTask = events.findIndex((e) => e.workflowTaskCompletedEventAttributes != null);
      if (!events.slice(0, firstTask).some((e) => e.workflowExecutionSignaledEventAttributes != null) || !events.some((e) => e.workflowExecutionUpdateAcceptedEventAttributes != null)) {
        throw new Error('the signal did not reach the session before its first workflow task: run again on a quieter machine');
      }
      const history = await client.exportHistory(id);
      writeFileSync(join(OUT, `${prefix}-first-task-signal-and-update.json`), `${JSON.stringify(history, null, 2)}\n`);
      process.stdout.write(`wrote ${prefix}-first-task-signal-and-update.json to ${OUT}\n`);
    } finally {
      await worker.stop();
    }
  } finally {
    await client.closeConnection();
  }
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
