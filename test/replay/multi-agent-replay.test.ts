import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { editAcceptedUpdates, foldHistory, parseExportedHistory, runCount, runsOf, type ExportedHistory } from '../../src/history';
import { subagentSpawnUpdate } from '../../workflows/messages';
import type { TodoPolicy } from '../../src/todo';
import type { SessionState } from '../../src/session';
import { bundledScriptFile } from '../../src/model-server';
import { replaySessionHistory } from '../../src/worker';
import { replaySession, todo, uniqueId, useTestBed } from '../helpers';

const HISTORIES = join(__dirname, '..', 'histories');
const POLICIES: TodoPolicy[] = [{ allowParallelInProgress: true }, { allowParallelInProgress: false }];
const load = (name: string): ExportedHistory => parseExportedHistory(readFileSync(join(HISTORIES, name), 'utf8'));

/** What each recorded scenario must end in, whichever release recorded it (v0: the first release). */
const EXPECTED: Record<string, (final: SessionState, release: string) => void> = {
  'spawn-and-child-closed': (final) => {
    assert.deepEqual(final.todos, [todo('Delegate the tests', 'completed'), todo('Write the notes', 'completed')]);
    assert.deepEqual(final.children.map((c) => [c.name, c.closed, c.counts]), [['tests', true, { pending: 0, in_progress: 0, completed: 1 }]]);
    assert.equal(final.closed, true);
  },
  'spawn-and-child-closed.child': (final) => {
    assert.deepEqual(final.todos, [todo('Run the suite', 'completed')]);
    assert.equal(final.closed, true);
  },
  'close-with-open-children': (final) => {
    assert.deepEqual(final.children.map((c) => [c.name, c.closed]), [['lint', true], ['docs', true]]);
    assert.deepEqual(final.children[0]?.counts, { pending: 0, in_progress: 1, completed: 0 });
    assert.equal(final.closed, true);
  },
  'continued-as-new': (final) => {
    assert.deepEqual(final.todos, [todo('Step 30', 'in_progress'), todo('Last step')]);
    assert.deepEqual(final.children.map((c) => [c.name, c.closed]), [['worker', true]]);
    assert.equal(final.turn, 1);
    assert.equal(final.closed, true);
  },
  'near-duplicates-and-signal': (final, release) => {
    // The first release accepted the near-duplicates; replay keeps them (the rule judges new writes only).
    assert.equal(final.todos?.length, release === 'v0' ? 10 : 5);
    assert.deepEqual(final.ignoredSignals.map((s) => s.name), ['todo_write'], 'the signal is listed, also when a v0 history is replayed');
    assert.match(final.ignoredSignals[0]?.reason ?? '', /todo_write is an Update, not a Signal/);
  },
  'spawn-onto-taken-id': (final, release) => {
    // The first release kept a subagent whose child never started; its histories replay that way.
    assert.deepEqual(
      final.children.map((c) => c.name),
      release === 'v0' ? ['b', 'c'] : ['c'],
    );
    assert.equal(final.children.find((c) => c.name === 'c')?.closed, true);
  },
};

/** Agent-loop histories, recorded from the release that brought the loop (v1) on. */
const AGENT_EXPECTED: Record<string, (final: SessionState) => void> = {
  'agent-subagents': (final) => {
    assert.ok(final.todos?.every((t) => t.status === 'completed') && final.todos.length === 3, JSON.stringify(final.todos));
    // The two spawns start side by side, so which child is recorded first depends on which start
    // Temporal answered first: compare them by name.
    const children = final.children.map((c) => [c.name, c.closed, typeof c.answer]).sort(([a], [b]) => String(a).localeCompare(String(b)));
    assert.deepEqual(children, [['docs', true, 'string'], ['tests', true, 'string']]);
  },
  'agent-subagents.tests': (final) => {
    assert.equal(final.closed, true, 'a subagent closes once it ran its task');
    assert.ok(final.todos?.every((t) => t.status === 'completed'));
  },
  'agent-subagents.docs': (final) => assert.equal(final.closed, true),
  'agent-rejected-write': (final) => {
    assert.equal(final.turn, 1);
    assert.ok(final.todos?.every((t) => t.status === 'completed'), JSON.stringify(final.todos));
  },
};
Object.assign(EXPECTED, Object.fromEntries(Object.entries(AGENT_EXPECTED).map(([name, check]) => [name, (final: SessionState) => check(final)])));

/** A fork's history, recorded from the release that brought forks (v2) on: its first run starts from its `fork` input. */
const FORK_EXPECTED: Record<string, (final: SessionState) => void> = {
  fork: (final) => {
    // Forked in the middle of the source's first turn (ended there), then one turn of its own.
    assert.equal(final.turn, 2);
    assert.deepEqual(final.todos, [todo('Run lint', 'completed'), todo('Fix the errors', 'completed')]);
    assert.equal(final.children.length, 0);
  },
};
Object.assign(EXPECTED, Object.fromEntries(Object.entries(FORK_EXPECTED).map(([name, check]) => [name, (final: SessionState) => check(final)])));

/**
 * A session whose first workflow task carried a `turn/start` Signal and a `todo_write` Update,
 * recorded from the release that applies them in history order (v3, the `signals-in-history-order`
 * patch) and from the one that makes one marker and indexes once per batch of that task (v5, the
 * `first-task-indexed-once` patch): the write came after the turn began, so the turn's start did
 * not clear it.
 */
const FIRST_TASK_EXPECTED: Record<string, (final: SessionState) => void> = {
  'first-task-signal-and-update': (final) => {
    assert.equal(final.turn, 1);
    assert.equal(final.version, 2);
    assert.deepEqual(final.todos, [todo('plan', 'completed')]);
  },
};
Object.assign(EXPECTED, FIRST_TASK_EXPECTED);

/**
 * Tools from outside, recorded from the release that brought them (v4): MCP calls, a module
 * tool, a tool withheld after its description changed and accepted again. Replay asks no server:
 * what each turn was offered and every call's result are activity results in the history.
 */
const TOOLS_EXPECTED: Record<string, (final: SessionState) => void> = {
  'agent-mcp-tools': (final) => {
    assert.equal(final.turn, 3);
    // Turn 1 planned and completed both steps; turns 2 and 3 wrote no list, and a turn starts with none.
    assert.equal(final.todos, null);
    assert.equal(final.version, 8, 'three turns started and ended (six events) and two writes');
  },
};
Object.assign(EXPECTED, TOOLS_EXPECTED);

const recorded = readdirSync(HISTORIES)
  .filter((name) => /^v\d+-.*\.json$/.test(name))
  .sort();

describe('recorded multi-agent and long-running histories', () => {
  test('every scenario is recorded by the first release and by this one', () => {
    for (const scenario of Object.keys(EXPECTED)) {
      for (const release of scenario in TOOLS_EXPECTED ? ['v4'] : scenario in FIRST_TASK_EXPECTED ? ['v3', 'v5'] : scenario in FORK_EXPECTED ? ['v2'] : scenario in AGENT_EXPECTED ? ['v1'] : ['v0', 'v1']) assert.ok(recorded.includes(`${release}-${scenario}.json`), `${release}-${scenario}.json is missing`);
    }
  });

  for (const name of recorded) {
    const [, release, scenario] = /^(v\d+)-(.*)\.json$/.exec(name)!;
    for (const policy of POLICIES) {
      test(`${name} replays cleanly against today's code under allowParallelInProgress=${policy.allowParallelInProgress}`, async () => {
        const history = load(name);
        const report = await replaySessionHistory(history, policy);
        EXPECTED[scenario!]!(report.final, release!);
        if (scenario === 'continued-as-new') assert.equal(report.runs, 4);
      });
    }
  }

  test('the offline fold of a continued session starts every run from the state the previous one ended with', () => {
    const timeline = foldHistory(runsOf(load('v0-continued-as-new.json')));
    assert.deepEqual([...new Set(timeline.steps.map((s) => s.run))], [1, 2, 3, 4]);
    assert.ok(timeline.steps.every((step, i, all) => i === 0 || step.state.version >= all[i - 1]!.state.version));
  });
});

describe('rules that may change never run on replay', () => {
  test('a spawn whose task breaks the current bound still replays: the handler applies, only the validator judges', async () => {
    // Edit the v0 history the way a stricter release would see it: the accepted spawn's task is
    // now longer than today's validator allows (4,000 characters). It was accepted then, so it
    // must replay now.
    const long = 'x'.repeat(5000);
    const { history, edited } = editAcceptedUpdates(load('v0-spawn-and-child-closed.json'), subagentSpawnUpdate.name, (args) => ({ ...(args as object), task: long }));
    assert.equal(edited, 1);
    for (const policy of POLICIES) {
      const report = await replaySessionHistory(history, policy);
      assert.equal(report.final.children[0]?.task, long);
    }
  });
});

describe('multi-agent sessions with a replay on every workflow task', () => {
  const bed = useTestBed('no-cache-multi', { allowParallelInProgress: true }, { worker: { maxCachedWorkflows: 0 }, client: { continueAsNewAfter: 10 } });

  test('spawn, a child closing itself, a parent closing with an open child and several continue-as-new runs, with maxCachedWorkflows 0', async () => {
    const { client } = bed;
    const parent = uniqueId('forced');
    await client.start(parent);
    const done = await client.spawnSubagent(parent, { name: 'done', task: 'finish quickly' });
    const open = await client.spawnSubagent(parent, { name: 'open' });
    await client.todoWrite(done.sessionId, { todos: [todo('Quick', 'completed')] });
    await client.close(done.sessionId);
    for (let i = 1; i <= 25; i++) await client.todoWrite(parent, { todos: [todo(`Step ${i}`, 'in_progress'), todo('Open child', 'in_progress')] });
    await client.todoWrite(open.sessionId, { todos: [todo('Still going', 'in_progress')] });
    const closed = await client.close(parent);
    assert.deepEqual(closed.children.map((c) => [c.name, c.closed]), [['done', true], ['open', true]]);
    for (const id of [parent, done.sessionId, open.sessionId]) {
      for (const policy of POLICIES) {
        const report = await replaySession(client, id, policy);
        assert.equal(report.final.closed, true, id);
      }
    }
    const history = await client.exportHistory(parent);
    assert.ok(runCount(history) >= 3, 'the parent continued as new several times');
  });
});

describe('the agent loop with a replay on every workflow task', () => {
  const bed = useTestBed('no-cache-agent', { allowParallelInProgress: true }, {
    model: { scriptFile: bundledScriptFile('subagents') },
    worker: { maxCachedWorkflows: 0, agent: { model: 'scripted' } },
  });

  test('a subagent fan-out with maxCachedWorkflows 0 ends as it does with a cache, and replays under both policies', async () => {
    const { client } = bed;
    const id = uniqueId('no-cache-agent');
    const { messageId } = await client.sendMessage(id, 'Update the tests and the docs for the --verbose flag');
    let session = await client.session(id);
    for (let i = 0; i < 600 && !(session.agent.lastTurn?.messageId === messageId && !session.turnOpen); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      session = await client.session(id);
    }
    assert.equal(session.agent.lastTurn?.reason, 'completed', session.agent.lastTurn?.detail ?? '');
    for (const policy of POLICIES) {
      AGENT_EXPECTED['agent-subagents']!((await replaySession(client, id, policy)).final);
      for (const child of session.children) assert.equal((await replaySession(client, child.sessionId, policy)).final.closed, true);
    }
  });
});
