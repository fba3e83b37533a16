import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { SessionClient } from '../../src/client';
import { acceptedUpdates, foldHistory, historyEventsJson, loggedSignals, parseExportedHistory, runsOf } from '../../src/history';
import { bundledScriptFile, type BundledScript, type ModelServer, type ScriptJson } from '../../src/model-server';
import { addUsage, NO_USAGE, type ChatMessage, type TurnOutcome } from '../../src/session';
import type { TodoPolicy } from '../../src/todo';
import type { CreateWorkerOptions } from '../../src/worker';
import { assertRejected, replaySession, startTestBed, todo, turnOf, uniqueId, waitForSession, type TestWorker } from '../helpers';

/** The key the workers send; the scripted servers demand it, so it really travels. */
const API_KEY = 'sk-agent-loop-test-9f8e7d6c5b4a';

const SERIAL: TodoPolicy = { allowParallelInProgress: false };
const PARALLEL: TodoPolicy = { allowParallelInProgress: true };

/** Every session a test produced, replayed at the end under both policies. */
const produced: Array<{ client: SessionClient; sessionId: string }> = [];
const closers: Array<() => Promise<void>> = [];

after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A scripted model, a worker pointed at it through the agent settings, and a client, on a fresh task queue. */
interface Scenario {
  server: ModelServer;
  worker: TestWorker;
  client: SessionClient;
  /** A fresh session id, remembered for the replay at the end. */
  session(prefix: string): string;
}

async function scenario(
  script: BundledScript | ScriptJson,
  policy: TodoPolicy,
  agent: Omit<NonNullable<CreateWorkerOptions['agent']>, 'baseUrl' | 'apiKey'> = {},
): Promise<Scenario> {
  const { model: server, worker, client, close } = await startTestBed('agent-loop', policy, {
    model: { ...(typeof script === 'string' ? { scriptFile: bundledScriptFile(script) } : { script }), apiKey: API_KEY },
    worker: { agent: { apiKey: () => API_KEY, ...agent } },
  });
  closers.push(close);
  return {
    server,
    worker,
    client,
    session(prefix) {
      const sessionId = uniqueId(prefix);
      produced.push({ client, sessionId });
      return sessionId;
    },
  };
}

/** Sends `text` to a fresh session of the scenario and waits for its turn to end. */
async function converse(on: Scenario, prefix: string, text: string): Promise<{ id: string; outcome: TurnOutcome }> {
  const id = on.session(prefix);
  const { messageId } = await on.client.sendMessage(id, text);
  return { id, outcome: await turnOf(on.client, id, messageId) };
}

function toolResults(messages: ChatMessage[]): string[] {
  return messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
}

function toolCallArguments(messages: ChatMessage[], name: string): string[] {
  return messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []).filter((c) => c.function.name === name).map((c) => c.function.arguments) : []));
}

describe('the agent loop', () => {
  test('the lint fix runs end to end: every write an accepted todo_write update, turn signals, the offline fold, usage and the transcript', async () => {
    const { client, session } = await scenario('lint-fix', SERIAL);
    const id = session('lint');
    const sent = await client.sendMessage(id, 'Fix the lint errors in src/');
    assert.deepEqual(sent, { messageId: 1, queued: false, ahead: 0 });
    const outcome = await turnOf(client, id, 1);
    assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
    assert.match(outcome.answer ?? '', /^Lint is clean/);

    const finalList = [todo('Run lint', 'completed'), todo('Fix the errors', 'completed'), todo('Re-run lint', 'completed')];
    assert.deepEqual(await client.todos(id), finalList);

    const history = await client.exportHistory(id);
    const writes = acceptedUpdates(history, 'todo_write');
    assert.equal(writes.length, 4, 'the script writes the list four times');
    // Each write's update id names the run and the activity that sent it: stable across the
    // activity's retries, unique in the session (unlike model call ids some servers reuse).
    const { runId } = await client.temporal.workflow.getHandle(id).describe();
    assert.ok(writes.every((w) => new RegExp(`^tool:${runId}:\\d+$`).test(w.updateId)), writes.map((w) => w.updateId).join(', '));
    assert.equal(new Set(writes.map((w) => w.updateId)).size, 4);
    assert.deepEqual(writes.at(-1)?.args[0], { todos: finalList });
    const signals = loggedSignals(history).map((s) => s.name);
    assert.deepEqual(signals.filter((name) => name === 'turn/start' || name === 'turn/end'), ['turn/start', 'turn/end']);
    assert.deepEqual(loggedSignals(history, 'turn/start')[0]?.input, { reason: 'message 1' });
    assert.deepEqual(foldHistory(runsOf(parseExportedHistory(history)), id).final.todos, finalList);
    assert.ok(!JSON.stringify(history).includes(API_KEY), 'the API key is not in the history');

    const transcript = await client.transcript(id);
    assert.deepEqual(transcript.messages.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    assert.deepEqual(toolResults(transcript.messages), [
      'Updated todo list: 3 pending, 0 in progress, 0 completed',
      'Updated todo list: 1 pending, 1 in progress, 1 completed',
      'Updated todo list: 0 pending, 1 in progress, 2 completed',
      'Updated todo list: 0 pending, 0 in progress, 3 completed',
    ]);

    const { usage } = await client.session(id);
    assert.equal(usage.model_calls, 5);
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
    assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
    const written = toolCallArguments(transcript.messages, 'todo_write');
    assert.ok(usage.todo_write_chars > 0);
    assert.equal(usage.todo_write_chars, written.reduce((n, text) => n + text.length, 0));
    assert.equal(usage.output_chars, usage.todo_write_chars + (outcome.answer ?? '').length);
    assert.deepEqual(transcript.usage, usage);
    assert.deepEqual(await client.usage(id), { session: usage, tree: usage });
  });

  test("a rejected write comes back as the rule's message, the model corrects itself, and history holds only the accepted writes", async () => {
    const on = await scenario('rejected-write', SERIAL);
    const { client } = on;
    const { id, outcome } = await converse(on, 'rejected', 'Fix the lint errors, one step at a time');
    assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
    const results = toolResults((await client.transcript(id)).messages);
    assert.match(results[0] ?? '', /\[parallel-in-progress\]/);
    assert.match(results[0] ?? '', /todos\[0\], todos\[1\]/);
    const writes = acceptedUpdates(await client.exportHistory(id), 'todo_write');
    assert.equal(writes.length, 2, 'the refused list left nothing in history');
    assert.ok(writes.every((w) => /^tool:[0-9a-f-]+:\d+$/.test(w.updateId)), writes.map((w) => w.updateId).join(', '));
  });

  test('a turn that ends with open todos is nudged once, and the model finishes the list', async () => {
    const on = await scenario('nudge', SERIAL, { nudge: true });
    const { client } = on;
    const { id, outcome } = await converse(on, 'nudge', 'Fix the lint errors');
    assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
    assert.match(outcome.answer ?? '', /Both lint errors are fixed/);
    const { messages } = await client.transcript(id);
    const nudges = messages.flatMap((m) => (m.role === 'user' && /still open/.test(m.content) ? [m.content] : []));
    assert.equal(nudges.length, 1);
    assert.match(nudges[0]!, /"Run lint" \(in_progress\), "Fix the errors" \(pending\)/);
    assert.deepEqual(await client.todos(id), [todo('Run lint', 'completed'), todo('Fix the errors', 'completed')]);
  });

  test('with the nudge turned off, a turn with open todos just ends', async () => {
    const on = await scenario('nudge', SERIAL, { nudge: false });
    const { client } = on;
    const { id, outcome } = await converse(on, 'no-nudge', 'Fix the lint errors');
    assert.equal(outcome.reason, 'completed');
    assert.equal(outcome.answer, 'Lint reports two errors.');
    assert.equal((await client.session(id)).usage.model_calls, 2);
    assert.deepEqual((await client.session(id)).counts, { pending: 1, in_progress: 1, completed: 0 });
  });

  test("subagents run their own loops, their answers are the parent's spawn results, they close, and the tree's usage is the sum", async () => {
    const on = await scenario('subagents', PARALLEL);
    const { client } = on;
    const { id, outcome } = await converse(on, 'fanout', 'Update the tests and the docs for the --verbose flag');
    assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
    assert.match(outcome.answer ?? '', /^Done: the tests subagent/);
    const children = [`${id}/tests`, `${id}/docs`];
    for (const child of children) produced.push({ client, sessionId: child });

    const results = toolResults((await client.transcript(id)).messages);
    assert.ok(results.includes('Tests added for --verbose; the suite passes.'), JSON.stringify(results));
    assert.ok(results.includes('The README documents --verbose, with an example.'), JSON.stringify(results));

    const parent = await client.session(id);
    // Both spawns run side by side, so the children are recorded in whichever order they started.
    assert.deepEqual(parent.children.map((c) => [c.sessionId, c.closed]).sort(), children.map((c) => [c, true]).sort());
    assert.deepEqual(parent.todos, [todo('Update the tests', 'completed'), todo('Update the docs', 'completed'), todo('Review both changes', 'completed')]);
    let sum = addUsage(NO_USAGE, parent.usage);
    for (const childId of children) {
      const child = await client.session(childId);
      assert.equal(child.closed, true);
      assert.equal(child.agent.lastTurn?.reason, 'completed');
      assert.equal(child.usage.model_calls, 3);
      assert.equal(child.counts.completed, 2);
      sum = addUsage(sum, child.usage);
    }
    const usage = await client.usage(id);
    assert.deepEqual(usage.session, parent.usage);
    assert.deepEqual(usage.tree, sum);
    assert.equal(usage.tree.model_calls, 5 + 3 + 3);
  });

  test('a tool named in the approval list waits durably for a person: an approved call runs, a denied one reaches the model as a denial', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'agent-loop-workspace-'));
    closers.push(async () => rmSync(workspace, { recursive: true, force: true }));
    writeFileSync(join(workspace, 'README.md'), '# Demo project\nRun it with npm start.\n');
    const { client, session } = await scenario('approval', SERIAL, { approveTools: ['read_file'], workspace });

    const approvedId = session('approve');
    const first = await client.sendMessage(approvedId, 'Summarise the README (approve the read)');
    const waiting = await waitForSession(client, approvedId, (s) => s.agent.activity.state === 'waiting-approval');
    assert.deepEqual(
      waiting.agent.pendingApprovals.map((p) => [p.callId, p.name, p.arguments]),
      [['call_approved_0_0', 'read_file', JSON.stringify({ path: 'README.md' })]],
    );
    await assertRejected(client.approve(approvedId, 'call_nobody_made'), 'no-pending-call', /waiting: call_approved_0_0/);
    assert.deepEqual(await client.approve(approvedId, 'call_approved_0_0'), { callId: 'call_approved_0_0', decision: 'approved' });
    const approved = await turnOf(client, approvedId, first.messageId);
    assert.equal(approved.reason, 'completed', approved.detail ?? '');
    assert.deepEqual(toolResults((await client.transcript(approvedId)).messages), ['# Demo project\nRun it with npm start.\n']);

    const deniedId = session('deny');
    const second = await client.sendMessage(deniedId, 'Summarise the README (deny the read)');
    await waitForSession(client, deniedId, (s) => s.agent.pendingApprovals.some((p) => p.callId === 'call_denied_0_0'));
    assert.deepEqual(await client.deny(deniedId, 'call_denied_0_0', 'not today'), { callId: 'call_denied_0_0', decision: 'denied' });
    const denied = await turnOf(client, deniedId, second.messageId);
    assert.match(denied.answer ?? '', /denied/);
    assert.deepEqual(toolResults((await client.transcript(deniedId)).messages), ['the call was denied by a person: not today']);
    assert.deepEqual((await client.session(deniedId)).agent.pendingApprovals, []);
  });

  test('the step cap ends a runaway turn with max-steps, naming AGENT_SESSIONS_MAX_STEPS', async () => {
    const on = await scenario('lint-fix', SERIAL, { maxSteps: 2 });
    const { client } = on;
    const { id, outcome } = await converse(on, 'capped', 'Fix the lint errors');
    assert.equal(outcome.reason, 'max-steps');
    assert.match(outcome.detail ?? '', /after 2 model calls .*AGENT_SESSIONS_MAX_STEPS/);
    assert.equal((await client.session(id)).usage.model_calls, 2);
    assert.equal(loggedSignals(await client.exportHistory(id), 'turn/end').length, 1);
  });
});

/** One script for the model server's failures, a slow call and a queue of messages. */
const FAULTS: ScriptJson = {
  conversations: [
    { name: 'flaky', match: { firstUserMessage: '^Flaky' }, steps: [{ respond: { content: 'Answered on the second try.', error: { status: 500, message: 'upstream hiccup', times: 1 } } }] },
    { name: 'refused', match: { firstUserMessage: '^Refused' }, steps: [{ respond: { error: { status: 400, message: "Invalid 'tools': this model does not support function calling" } } }] },
    { name: 'slow', match: { firstUserMessage: '^Slow' }, steps: [{ respond: { content: 'Too late.', delayMs: 120_000 } }] },
    {
      name: 'queue',
      match: { firstUserMessage: '^First question' },
      steps: [
        { respond: { content: 'First answer.', delayMs: 1500 } },
        { expect: { lastMessage: { role: 'user', contentMatches: '^Second question' } }, respond: { content: 'Second answer.' } },
      ],
    },
  ],
};

describe('the agent loop when the model misbehaves', () => {
  // One worker and one scripted model for all of these: the conversations are told apart by their first message.
  let shared: Promise<Scenario> | undefined;
  const faults = (): Promise<Scenario> => (shared ??= scenario(FAULTS, SERIAL));

  test('a 500 is retried by Temporal and the turn completes', async () => {
    const on = await faults();
    const { client, server } = on;
    const { id, outcome } = await converse(on, 'flaky', 'Flaky model, please answer');
    assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
    assert.equal(outcome.answer, 'Answered on the second try.');
    assert.deepEqual(server.requests().filter((r) => r.conversation === 'flaky').map((r) => r.status), [500, 200]);
    assert.equal((await client.session(id)).usage.model_calls, 1, 'a failed attempt reports no usage');
  });

  test("a 400 ends the turn with model-error and the server's message", async () => {
    const on = await faults();
    const { client, server } = on;
    const { id, outcome } = await converse(on, 'refused', 'Refused request');
    assert.equal(outcome.reason, 'model-error');
    assert.match(outcome.detail ?? '', /HTTP 400: Invalid 'tools': this model does not support function calling/);
    assert.equal(server.requests().filter((r) => r.conversation === 'refused').length, 1, 'not retried');
    assert.equal(loggedSignals(await client.exportHistory(id), 'turn/end').length, 1);
  });

  test('an interrupt cancels the model call in flight: the turn ends interrupted and the request is abandoned, not left running', async () => {
    const { client, server, session } = await faults();
    const id = session('interrupt');
    await client.start(id);
    await assertRejected(client.interrupt(id), 'no-running-turn', /no turn is running/);
    const { messageId } = await client.sendMessage(id, 'Slow thinking needed');
    await server.waitForRequest((r) => r.conversation === 'slow' && r.inFlight, { timeoutMs: 30_000 });
    const started = Date.now();
    const outcome = await client.interrupt(id);
    assert.equal(outcome?.reason, 'interrupted');
    assert.equal(outcome?.messageId, messageId);
    await waitForSession(client, id, (s) => !s.turnOpen);
    const record = await server.waitForRequest((r) => r.conversation === 'slow' && !r.inFlight, { timeoutMs: 5000 });
    assert.equal(record.completed, false, 'the request was abandoned by the worker');
    assert.ok(Date.now() - started < 30_000);
    const history = await client.exportHistory(id);
    assert.ok(historyEventsJson(history).some((e) => e.activityTaskCanceledEventAttributes !== undefined), 'the model call ended as cancelled');
    assert.equal(loggedSignals(history, 'turn/end').length, 1);
    assert.ok(!JSON.stringify(history).includes(API_KEY));
  });

  test('a message sent while a turn runs is queued and runs as the next turn', async () => {
    const { client, session } = await faults();
    const id = session('queue');
    const first = await client.sendMessage(id, 'First question');
    await waitForSession(client, id, (s) => s.agent.activity.state === 'calling-model');
    const second = await client.sendMessage(id, 'Second question');
    assert.deepEqual(second, { messageId: 2, queued: true, ahead: 1 });
    // The second turn starts the moment the first ends, so only the second is waited for.
    const outcome = await turnOf(client, id, second.messageId);
    assert.equal(first.messageId, 1);
    assert.equal(outcome.answer, 'Second answer.');
    assert.equal(outcome.turn, 2);
    const { messages } = await client.transcript(id);
    assert.deepEqual(messages.map((m) => m.content), ['First question', 'First answer.', 'Second question', 'Second answer.']);
    assert.deepEqual(loggedSignals(await client.exportHistory(id)).map((s) => s.name), ['turn/start', 'turn/end', 'turn/start', 'turn/end']);
  });
});

describe('histories of the agent loop', () => {
  test('every history produced here replays under both policies, and none holds the API key', async () => {
    assert.ok(produced.length >= 12, `${produced.length} sessions`);
    for (const { client, sessionId } of produced) {
      const history = await client.exportHistory(sessionId);
      assert.ok(!JSON.stringify(history).includes(API_KEY), `the API key is in the history of ${sessionId}`);
      const reports = [];
      for (const policy of [SERIAL, PARALLEL]) reports.push(await replaySession(client, sessionId, policy));
      assert.deepEqual(reports[0]!.final.todos, reports[1]!.final.todos, sessionId);
      assert.deepEqual(reports[0]!.final.todos, await client.todos(sessionId), sessionId);
    }
  });
});
