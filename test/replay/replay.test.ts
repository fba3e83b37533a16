import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { Worker } from '@temporalio/worker';
import { foldHistory, parseHistory } from '../../src/history/session-history';
import type { TodoPolicy } from '../../src/todo';
import { bundleSessionWorkflows, ReplayFailedError, replaySessionHistory } from '../../src/worker';
import { replaySession, todo, uniqueId, useTestBed } from '../helpers';

const HISTORIES = join(__dirname, '..', 'histories');
const load = (name: string) => readFileSync(join(HISTORIES, name), 'utf8');
const POLICIES: TodoPolicy[] = [{ allowParallelInProgress: true }, { allowParallelInProgress: false }];

const recorded = {
  'parallel-policy.json': [todo('Release', 'in_progress'), todo('Announce', 'in_progress')],
  'single-policy.json': [todo('Release', 'completed'), todo('Announce', 'in_progress')],
};

describe('recorded histories', () => {
  for (const policy of POLICIES) {
    test(`histories recorded under both policies replay cleanly under allowParallelInProgress=${policy.allowParallelInProgress}`, async () => {
      const workflowBundle = await bundleSessionWorkflows(policy);
      const histories = Object.keys(recorded).map((name) => ({ workflowId: name, history: parseHistory(load(name)) }));
      let replayed = 0;
      for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: `replay-${policy.allowParallelInProgress}` }, histories)) {
        assert.equal(result.error, undefined, `${result.workflowId}: ${String(result.error)}`);
        replayed++;
      }
      assert.equal(replayed, 2);
    });
  }

  test('the offline fold of each recorded history ends on its last written list, whatever the policy', async () => {
    for (const [name, expected] of Object.entries(recorded)) {
      for (const policy of POLICIES) {
        const report = await replaySessionHistory(load(name), policy);
        assert.deepEqual(report.final.todos, expected, name);
        assert.equal(report.final.closed, true);
        assert.equal(report.final.turn, 2);
      }
    }
  });

  test('the fold steps through the past: the list at every point of the session', () => {
    const timeline = foldHistory(parseHistory(load('parallel-policy.json')));
    assert.deepEqual(
      timeline.steps.map((step) => step.event.type),
      ['turn/start', 'todo/write', 'todo/write', 'turn/end', 'turn/start', 'todo/write', 'todo/write', 'turn/end', 'session/close'],
    );
    assert.equal(timeline.steps[3]?.state.todos?.length, 3, 'turn/end keeps the list');
    assert.equal(timeline.steps[4]?.state.todos, null, 'turn/start clears it');
    assert.ok(timeline.steps.every((step, i, all) => i === 0 || step.eventId > all[i - 1]!.eventId));
  });
});

describe('hand-broken histories', () => {
  for (const [name, pattern] of [
    // `.` for the quotes: Temporal's replayer reports the message with its quotes escaped.
    ['broken-untrimmed.json', /invariant.*todos\[0\]\.content must be a non-empty, already trimmed string, got \\?. {2}Read the failing test/],
    ['broken-repeated.json', /invariant.*todos\[1\]\.content repeats \\?.Read the failing test/],
  ] as const) {
    test(`${name} fails replay with a message naming the invariant and the event`, async () => {
      await assert.rejects(replaySessionHistory(load(name), { allowParallelInProgress: true }), (error: unknown) => {
        assert.ok(error instanceof ReplayFailedError);
        assert.match(error.message, pattern);
        assert.match(error.message, /todo\/write at event \d+/, 'the offline check names the history event');
        return true;
      });
    });

    test(`${name} also fails inside the workflow code on Temporal's replayer, not only in the offline fold`, async () => {
      const workflowBundle = await bundleSessionWorkflows({ allowParallelInProgress: false });
      const results = [];
      for await (const result of Worker.runReplayHistories({ workflowBundle }, [{ workflowId: name, history: parseHistory(load(name)) }])) {
        results.push(result);
      }
      assert.equal(results.length, 1);
      assert.ok(results[0]?.error, 'the replay must fail');
      assert.match(String(results[0]?.error?.message), pattern);
    });
  }
});

describe('forced replay on every task', () => {
  const bed = useTestBed('no-cache', { allowParallelInProgress: true }, { worker: { maxCachedWorkflows: 0 } });

  test('with maxCachedWorkflows 0 every task replays the history from the start and the session still behaves', async () => {
    const { client } = bed;
    const id = uniqueId('replay-every-task');
    await client.start(id);
    for (let turn = 1; turn <= 3; turn++) {
      await client.turnStart(id);
      await client.todoWrite(id, { todos: [todo(`turn ${turn} a`, 'in_progress'), todo(`turn ${turn} b`, 'in_progress')] });
      await client.todoWrite(id, { todos: [todo(`turn ${turn} a`, 'completed'), todo(`turn ${turn} b`, 'completed')] });
      await client.turnEnd(id);
    }
    const session = await client.session(id);
    assert.deepEqual(session.todos, [todo('turn 3 a', 'completed'), todo('turn 3 b', 'completed')]);
    assert.equal(session.version, 12);
    assert.equal(session.turn, 3);
    const report = await replaySession(client, id, { allowParallelInProgress: false });
    assert.deepEqual(report.final.todos, session.todos);
  });
});
