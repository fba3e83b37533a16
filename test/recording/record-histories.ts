/**
 * Records the session histories that the replay tests keep under test/histories/, against a
 * real Temporal server (TEMPORAL_ADDRESS, or a dev server started for the occasion):
 *   parallel-policy.json  written under allowParallelInProgress=true (two in_progress at once)
 *   single-policy.json    written under allowParallelInProgress=false
 * and two broken copies of the first, each with one todo_write edited by hand in its payload:
 *   broken-untrimmed.json (a content with leading spaces) and broken-repeated.json (a content repeated).
 *
 * Run: npm run record-histories
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { editAcceptedUpdates, type HistoryJson } from '../../src/history';
import { todoWriteUpdate } from '../../workflows/messages';
import type { TodoPolicy } from '../../src/todo';
import { connectClient, startWorker, todo, uniqueId } from '../helpers';

const OUT = join(__dirname, '..', 'histories');

async function record(policy: TodoPolicy): Promise<HistoryJson> {
  const taskQueue = uniqueId('record');
  const worker = await startWorker(policy, taskQueue);
  const client = await connectClient(taskQueue);
  const id = uniqueId(policy.allowParallelInProgress ? 'parallel' : 'single');
  try {
    await client.start(id);
    await client.turnStart(id);
    await client.todoWrite(id, { todos: [todo('Read the failing test'), todo('Fix the parser'), todo('Update docs')] });
    await client.todoWrite(id, {
      todos: policy.allowParallelInProgress
        ? [todo('Read the failing test', 'completed'), todo('Fix the parser', 'in_progress'), todo('Update docs', 'in_progress')]
        : [todo('Read the failing test', 'completed'), todo('Fix the parser', 'in_progress'), todo('Update docs')],
    });
    await client.turnEnd(id);
    await client.turnStart(id);
    await client.todoWrite(id, { todos: [todo('Release', 'in_progress')] });
    await client.todoWrite(id, {
      todos: policy.allowParallelInProgress
        ? [todo('Release', 'in_progress'), todo('Announce', 'in_progress')]
        : [todo('Release', 'completed'), todo('Announce', 'in_progress')],
    });
    await client.turnEnd(id);
    await client.close(id);
    return (await client.exportHistory(id)) as HistoryJson; // one run: far below the continue-as-new threshold
  } finally {
    await client.closeConnection();
    await worker.stop();
  }
}

/** Edits the first todo_write's list in a copy, the way a person would corrupt a log. */
function breakHistory(history: HistoryJson, edit: (todos: Array<{ content: string; status: string }>) => void): HistoryJson {
  const { history: broken, edited } = editAcceptedUpdates(history, todoWriteUpdate.name, (args, index) => {
    if (index > 0) return args;
    const copy = structuredClone(args) as { todos: Array<{ content: string; status: string }> };
    edit(copy.todos);
    return copy;
  });
  if (edited === 0) throw new Error('no todo_write in the history');
  return broken as HistoryJson;
}

async function main(): Promise<void> {
  const parallel = await record({ allowParallelInProgress: true });
  const single = await record({ allowParallelInProgress: false });
  const save = (name: string, history: HistoryJson): void =>
    writeFileSync(join(OUT, name), `${JSON.stringify(history, null, 2)}\n`);
  save('parallel-policy.json', parallel);
  save('single-policy.json', single);
  save('broken-untrimmed.json', breakHistory(parallel, (todos) => { todos[0]!.content = `  ${todos[0]!.content}`; }));
  save('broken-repeated.json', breakHistory(parallel, (todos) => { todos[1]!.content = todos[0]!.content; }));
  process.stdout.write(`wrote 4 histories to ${OUT}\n`);
  process.exit(0);
}

void main();
