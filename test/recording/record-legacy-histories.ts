/**
 * Records multi-agent and long-running session histories with the workflow code of the
 * checkout it runs in, into test/histories/<prefix>-*.json. Run once per release whose
 * histories must keep replaying: the replay tests hold every later release to them
 * (test/histories/README.md says which release recorded which prefix).
 *
 * Run: npx tsx test/recording/record-legacy-histories.ts <prefix>
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionClient, TodoRejectedError } from '../../src/client';
import type { ExportedHistory } from '../../src/history/session-history';
import { connectClient, runTemporalCli, startWorker, temporalAddress, todo, uniqueId } from '../helpers';

const OUT = join(__dirname, '..', 'histories');

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main(): Promise<void> {
  const prefix = process.argv[2];
  if (!prefix) throw new Error('usage: npx tsx test/recording/record-legacy-histories.ts <prefix>');
  const taskQueue = uniqueId('record-legacy');
  const worker = await startWorker({ allowParallelInProgress: true }, taskQueue);
  const client = await connectClient(taskQueue);
  const cas = await SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 10 });
  const out: Record<string, ExportedHistory> = {};
  try {
    // 1. A parent spawns a subagent, the subagent works and closes itself (its report reaches
    //    the parent as subagent/closed), then the parent finishes and closes.
    const parent = uniqueId('spawn');
    await client.start(parent);
    await client.turnStart(parent);
    await client.todoWrite(parent, { todos: [todo('Delegate the tests', 'in_progress'), todo('Write the notes')] });
    const child = await client.spawnSubagent(parent, { name: 'tests', task: 'run the unit tests' });
    await client.turnStart(child.sessionId);
    await client.todoWrite(child.sessionId, { todos: [todo('Run the suite', 'completed')] });
    await client.turnEnd(child.sessionId);
    await client.close(child.sessionId);
    await until(async () => (await client.session(parent)).children.every((c) => c.closed), 'the child report');
    await client.todoWrite(parent, { todos: [todo('Delegate the tests', 'completed'), todo('Write the notes', 'completed')] });
    await client.turnEnd(parent);
    await client.close(parent);
    out['spawn-and-child-closed'] = await client.exportHistory(parent);
    out['spawn-and-child-closed.child'] = await client.exportHistory(child.sessionId);

    // 2. A parent closes with two open subagents: it signals them, waits for their reports
    //    (a condition with a timeout, so a timer), then completes.
    const closer = uniqueId('close-open');
    await client.start(closer);
    await client.spawnSubagent(closer, { name: 'lint' });
    await client.spawnSubagent(closer, { name: 'docs', task: 'update the README' });
    await client.todoWrite(closer, { todos: [todo('Lint', 'in_progress'), todo('Docs', 'in_progress')] });
    await client.todoWrite(`${closer}/lint`, { todos: [todo('Run eslint', 'in_progress')] });
    await client.close(closer);
    out['close-with-open-children'] = await client.exportHistory(closer);

    // 3. A session that continues as new several times (threshold 10), with a subagent
    //    spawned in the first run and closed in a later one.
    const long = uniqueId('continued');
    await cas.start(long);
    await cas.turnStart(long);
    await cas.spawnSubagent(long, { name: 'worker' });
    for (let i = 1; i <= 30; i++) {
      await cas.todoWrite(long, { todos: [todo(`Step ${i}`, 'in_progress'), todo('Last step')] }, { updateId: `${long}:${i}` });
      if (i === 17) await cas.close(`${long}/worker`);
    }
    await until(async () => (await cas.session(long)).children.every((c) => c.closed), 'the child report');
    await cas.turnEnd(long);
    await cas.close(long);
    out['continued-as-new'] = await cas.exportHistory(long);

    // 4. Contents that differ only by case, spacing and Unicode form, accepted by this release;
    //    and a todo_write sent as a Signal, which this release drops without a trace.
    const near = uniqueId('near-duplicate');
    const nearDuplicates = [todo('Fix the build'), todo('fix the build'), todo('修复 X'), todo('修复 x'), todo('Run  lint'), todo('Run lint'), todo('Caf\u00e9'), todo('Cafe\u0301'), todo('ＡＢＣ'), todo('ABC')];
    // Releases with the near-duplicate rule refuse that list (leaving nothing in history).
    await client.todoWrite(near, { todos: nearDuplicates }).catch(async (error: unknown) => {
      if (!(error instanceof TodoRejectedError)) throw error;
      await client.todoWrite(near, { todos: nearDuplicates.filter((_, i) => i % 2 === 0) });
    });
    const signalled = await runTemporalCli([
      'workflow', 'signal', '--workflow-id', near, '--name', 'todo_write',
      '--input', JSON.stringify({ todos: [todo('Sent as a signal')] }),
    ]);
    if (signalled.code !== 0) throw new Error(`temporal workflow signal failed: ${signalled.stderr}`);
    await until(async () => (await client.session(near)).version >= 1, 'the signal');
    await client.close(near);
    out['near-duplicates-and-signal'] = await client.exportHistory(near);

    // 5. A spawn whose child id another session already holds (a foreign start of the id),
    //    then a spawn that works, then the parent closes.
    const squatted = uniqueId('taken');
    const squat = await runTemporalCli(['workflow', 'start', '--type', 'agentSession', '--task-queue', taskQueue, '--workflow-id', `${squatted}/b`]);
    if (squat.code !== 0) throw new Error(`temporal workflow start failed: ${squat.stderr}`);
    await client.start(squatted);
    await client.spawnSubagent(squatted, { name: 'b' }).catch(() => undefined);
    await client.spawnSubagent(squatted, { name: 'c' });
    await client.close(squatted);
    out['spawn-onto-taken-id'] = await client.exportHistory(squatted);
  } finally {
    await cas.closeConnection();
    await client.closeConnection();
    await worker.stop();
  }
  for (const [name, history] of Object.entries(out)) {
    writeFileSync(join(OUT, `${prefix}-${name}.json`), `${JSON.stringify(history, null, 2)}\n`);
  }
  process.stdout.write(`wrote ${Object.keys(out).length} histories to ${OUT}\n`);
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
