import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SessionClient } from '../../src/client';
import type { SessionHistoryJson } from '../../src/history/session-history';
import { countAcceptedUpdates, replaySession, runCli, temporalAddress, todo, uniqueId, until, useTestBed } from '../helpers';

const bed = useTestBed('can', { allowParallelInProgress: true }, { client: { continueAsNewAfter: 10 } });
const { taskQueue } = bed;

function runIds(history: Awaited<ReturnType<SessionClient['exportHistory']>>): string[] {
  return 'runs' in history ? history.runs.map((run) => run.runId) : [];
}

describe('continue-as-new every 10 events', () => {
  test('a session that continued as new several times answers queries, takes writes and turns, exports and replays its whole history', async () => {
    const id = uniqueId('long');
    await bed.client.start(id);
    for (let turn = 1; turn <= 4; turn++) {
      await bed.client.turnStart(id);
      for (let step = 1; step <= 8; step++) {
        await bed.client.todoWrite(id, { todos: [todo(`turn ${turn} step ${step}`, 'in_progress'), todo('keep going')] });
      }
      await bed.client.turnEnd(id);
    }
    const session = await bed.client.session(id);
    assert.equal(session.turn, 4);
    assert.equal(session.turnOpen, false);
    assert.equal(session.version, 4 * 10);
    assert.deepEqual(session.todos, [todo('turn 4 step 8', 'in_progress'), todo('keep going')]);

    const history = await bed.client.exportHistory(id);
    const runs = runIds(history);
    assert.ok(runs.length >= 4, `expected several runs, got ${runs.length}`);
    assert.equal(new Set(runs).size, runs.length);
    assert.equal(countAcceptedUpdates(history), 32, 'every write is in exactly one run');
    for (const run of (history as SessionHistoryJson).runs) assert.ok(run.events.length < 120, `a run of ${run.events.length} events`);

    for (const allowParallelInProgress of [true, false]) {
      const report = await replaySession(bed.client, id, { allowParallelInProgress });
      assert.equal(report.runs, runs.length);
      assert.deepEqual(report.final.todos, session.todos);
      assert.equal(report.final.version, session.version);
    }

    const dir = mkdtempSync(join(tmpdir(), 'can-history-'));
    const file = join(dir, 'history.json');
    const env = { AGENT_SESSIONS_TASK_QUEUE: taskQueue };
    const exported = await runCli(['history', id, '--out', file], { env });
    assert.equal(exported.code, 0, exported.stderr);
    const replayed = await runCli(['replay', '--file', file, '--allow-parallel-in-progress', 'false'], { env });
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.deepEqual(JSON.parse(replayed.stdout), session.todos);
  });

  test('a run whose carried state was edited by hand does not replay', async () => {
    const id = uniqueId('tampered');
    for (let i = 0; i < 12; i++) await bed.client.todoWrite(id, { todos: [todo(`write ${i}`)] });
    const history = (await bed.client.exportHistory(id)) as SessionHistoryJson;
    assert.ok(history.runs.length >= 2);
    const started = history.runs[1]!.events[0] as { workflowExecutionStartedEventAttributes: { input: { payloads: Array<{ data: string }> } } };
    const payload = started.workflowExecutionStartedEventAttributes.input.payloads[0]!;
    const input = JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
    input.carried.todos = [todo('write 0'), todo('write 0')];
    payload.data = Buffer.from(JSON.stringify(input)).toString('base64');
    const file = join(mkdtempSync(join(tmpdir(), 'tampered-')), 'history.json');
    writeFileSync(file, JSON.stringify(history));
    const result = await runCli(['replay', '--file', file, '--allow-parallel-in-progress', 'true']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /invariant broken by the state carried into this run: todos\[1\]\.content repeats "write 0"/);
  });

  test('the tree and the list follow a parent and children that continue as new', async () => {
    const parent = uniqueId('can-parent');
    await bed.client.start(parent);
    const { sessionId } = await bed.client.spawnSubagent(parent, { name: 'busy' });
    for (let i = 0; i < 25; i++) await bed.client.todoWrite(sessionId, { todos: [todo(`child ${i}`, 'in_progress')] });
    for (let i = 0; i < 12; i++) await bed.client.todoWrite(parent, { todos: [todo(`parent ${i}`)] });
    assert.ok(runIds(await bed.client.exportHistory(parent)).length >= 2);
    const tree = await bed.client.tree(parent, { full: true });
    assert.deepEqual(tree.todos, [todo('parent 11')]);
    assert.deepEqual(tree.children[0]?.todos, [todo('child 24', 'in_progress')]);
    // The summary follows the child across its runs: visibility lists its newest run, not the ones it continued from.
    const summary = await until('the tree to summarize the child at its last write', async () => {
      const found = (await bed.client.tree(parent)).children;
      return found.length === 1 && found[0]?.version === 25 ? found[0] : undefined;
    });
    assert.deepEqual(summary.inProgressContent, ['child 24']);
    const closed = await bed.client.close(parent);
    assert.deepEqual(closed.children[0]?.counts, { pending: 0, in_progress: 1, completed: 0 });
    assert.equal(closed.children[0]?.closed, true);
  });
});

test('a 10,000-write session keeps each run small and bounded', { skip: process.env.AGENT_SESSIONS_LONG_TESTS !== '1' && 'set AGENT_SESSIONS_LONG_TESTS=1 (npm test in CI does)' }, async (t) => {
  const long = await SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 200 });
  const id = uniqueId('ten-thousand');
  const started = Date.now();
  try {
    for (let i = 0; i < 10_000; i++) {
      await long.todoWrite(id, { todos: [todo(`write ${i}`, 'in_progress'), todo('the rest')] });
    }
    const elapsed = Date.now() - started;
    const history = (await long.exportHistory(id)) as SessionHistoryJson;
    const sizes = history.runs.map((run) => run.events.length);
    const bytes = history.runs.map((run) => JSON.stringify(run.events).length);
    t.diagnostic(`10,000 writes in ${elapsed} ms (${Math.round(10_000 / (elapsed / 1000))}/s); ${sizes.length} runs; largest run ${Math.max(...sizes)} events, ${Math.max(...bytes)} bytes of JSON`);
    assert.equal(countAcceptedUpdates(history), 10_000);
    assert.ok(sizes.length >= 50);
    // 200 writes of 6 events each (the update's accepted and completed events, a workflow task's
    // three, and the search-attribute upsert that keeps the listing current), plus the run's start
    // and end: far below Temporal's 4,096-event suggestion.
    assert.ok(Math.max(...sizes) <= 1_250, `largest run has ${Math.max(...sizes)} events`);
    assert.deepEqual(await long.todos(id), [todo('write 9999', 'in_progress'), todo('the rest')]);
    assert.equal((await long.session(id)).version, 10_000);
  } finally {
    await long.closeConnection();
  }
});
