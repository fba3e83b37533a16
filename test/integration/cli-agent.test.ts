import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AgentActivity } from '../../src/session';
import { ANSWERS, MESSAGES, agentTestScript } from '../fixtures/agent-script';
import { ROOT, runCli, spawnCli, uniqueId, until, useTestBed } from '../helpers';

const bed = useTestBed('cli-agent', { allowParallelInProgress: false }, {
  model: { script: agentTestScript() },
  worker: { agent: { apiKey: () => 'scripted', approveTools: ['read_file'], workspace: ROOT } },
});
const env = { AGENT_SESSIONS_TASK_QUEUE: bed.taskQueue };
const cli = (...args: string[]) => runCli(args, { env });

/** A `chat` left running, with what it printed on each stream so far. */
async function startChat(id: string, text: string) {
  const chat = await spawnCli(['chat', id, text], env);
  let stdout = '';
  let stderr = '';
  chat.child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  chat.child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { ...chat, stdout: () => stdout, stderr: () => stderr };
}

async function activityOf(id: string): Promise<AgentActivity['state'] | undefined> {
  return bed.client.session(id).then(
    (s) => s.agent.activity.state,
    () => undefined,
  );
}

describe('agent-sessions chat, transcript, usage, interrupt, approve and deny', () => {
  test('chat tells each tool call, result and list change on stderr, prints the answer on stdout and exits 0', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-lint');
    const chat = await cli('chat', id, MESSAGES.lintFix);
    assert.equal(chat.code, 0, chat.stderr);
    assert.equal(chat.stdout, `${ANSWERS.lintFix}\n`, 'stdout holds the answer and nothing else');
    const lines = chat.stderr.split('\n');
    assert.equal(lines.filter((line) => line.startsWith('→ todo_write {"todos":[')).length, 4, chat.stderr);
    for (const counts of ['3 pending, 0 in progress, 0 completed', '1 pending, 1 in progress, 1 completed', '0 pending, 1 in progress, 2 completed', '0 pending, 0 in progress, 3 completed']) {
      assert.ok(lines.includes(`← Updated todo list: ${counts}`), `${counts} in:\n${chat.stderr}`);
    }
    // Each call is told before its result, and the list as the session holds it.
    assert.ok(chat.stderr.indexOf('→ todo_write') < chat.stderr.indexOf('← Updated todo list: 3 pending'));
    assert.match(chat.stderr, /todo list:\n {2}\[x\] Run lint\n {2}\[x\] Fix the errors\n {2}\[x\] Re-run lint/);
    assert.equal(lines.filter((line) => line === 'todo list:').length, 4, 'each of the four lists is shown once, none missed');
    assert.doesNotMatch(chat.stderr, /REJECTED/);

    const json = await cli('transcript', id, '--json');
    assert.equal(json.code, 0, json.stderr);
    const transcript = await bed.client.transcript(id);
    assert.deepEqual(JSON.parse(json.stdout), transcript, '--json prints the transcript as it is');
    assert.deepEqual(Object.keys(transcript).sort(), ['compacted', 'lastTurn', 'messages', 'recentTurns', 'sessionId', 'usage']);
    assert.equal(transcript.lastTurn?.reason, 'completed');
    assert.equal(transcript.messages.at(-1)?.content, ANSWERS.lintFix);

    const text = await cli('transcript', id);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^user {7}Fix the lint errors$/m);
    assert.match(text.stdout, /^assistant {2}→ todo_write \{"todos":\[.*\]\} {2}\[call_[^\]]+\]$/m);
    assert.match(text.stdout, /^tool {7}← todo_write \[call_[^\]]+\]: Updated todo list: 0 pending, 0 in progress, 3 completed$/m);
    assert.match(text.stdout, /turn 1 \(message 1\) completed\nusage: [\d,]+ tokens .* in 5 model calls/);

    const usage = await cli('usage', id, '--json');
    assert.equal(usage.code, 0, usage.stderr);
    const report = JSON.parse(usage.stdout);
    const fields = ['completion_tokens', 'model_calls', 'output_chars', 'prompt_tokens', 'todo_write_chars', 'total_tokens'];
    assert.deepEqual(Object.keys(report), ['session', 'tree']);
    assert.deepEqual(Object.keys(report.session).sort(), fields);
    assert.deepEqual(Object.keys(report.tree).sort(), fields);
    assert.equal(report.session.model_calls, 5);
    assert.ok(report.session.todo_write_chars > 0 && report.session.todo_write_chars <= report.session.output_chars);
    assert.deepEqual(report.tree, report.session, 'no subagents: the tree is the session');
    const table = await cli('usage', id);
    assert.match(table.stdout, /^model_calls\s+5\s+5$/m);
  });

  test('a todo_write the session refused is marked as rejected, and the turn goes on to its answer', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-rejected');
    const chat = await cli('chat', id, MESSAGES.rejectedWrite);
    assert.equal(chat.code, 0, chat.stderr);
    assert.match(chat.stderr, /^← ✗ REJECTED \[parallel-in-progress\] todo_write rejected: at most one todo may be in_progress/m);
    assert.match(chat.stderr, /^← Updated todo list: 2 pending, 1 in progress, 0 completed$/m);
    assert.match(chat.stdout, /^Lint is clean\./);
    const text = await cli('transcript', id);
    assert.match(text.stdout, /^tool {7}← ✗ REJECTED todo_write \[call_[^\]]+\]: todo_write rejected: /m);
  });

  test('a call that waits for approval is told with the command that approves it, and approve lets it run', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-approve');
    const chat = await startChat(id, MESSAGES.approve);
    const callId = await until('the approval line', () => /^waiting for approval: call (\S+) read_file \{"path":"README.md"\} — agent-sessions approve (\S+) \1/m.exec(chat.stderr())?.[1]);
    assert.match(chat.stderr(), new RegExp(`agent-sessions approve ${id} ${callId} \\(or: agent-sessions deny ${id} ${callId} --reason TEXT\\)`));

    const wrong = await cli('approve', id, 'call_nobody_made');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /no tool call "call_nobody_made" waits for approval; waiting: /);

    const approved = await cli('approve', id, callId);
    assert.equal(approved.code, 0, approved.stderr);
    assert.equal(approved.stdout, `approved call ${callId} in session ${id}\n`);
    assert.equal(await chat.exited, 0, chat.stderr());
    assert.equal(chat.stdout(), `${ANSWERS.approve}\n`);
    assert.match(chat.stderr(), /^→ read_file \{"path":"README.md"\}$/m);
    assert.match(chat.stderr(), /^← # agent-sessions/m, 'the result is the file, on one line');
  });

  test('deny refuses the call with a reason the model reads as its result', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-deny');
    const chat = await startChat(id, MESSAGES.deny);
    const callId = await until('the approval line', () => /^waiting for approval: call (\S+) read_file/m.exec(chat.stderr())?.[1]);
    const denied = await cli('deny', id, callId, '--reason', 'not this file');
    assert.equal(denied.code, 0, denied.stderr);
    assert.equal(denied.stdout, `denied call ${callId} in session ${id}\n`);
    assert.equal(await chat.exited, 0, chat.stderr());
    assert.equal(chat.stdout(), `${ANSWERS.deny}\n`);
    assert.match(chat.stderr(), /^← the call was denied by a person: not this file$/m);
  });

  test('a message sent while a turn runs is queued and followed until its own turn ends', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-queued');
    const first = await startChat(id, MESSAGES.slow);
    await until('the slow model call', async () => ((await activityOf(id)) === 'calling-model' ? true : undefined));
    const second = await cli('chat', id, MESSAGES.queued);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /^message 2 is queued behind 1 other; following it until its own turn ends$/m);
    assert.equal(second.stdout, `${ANSWERS.queued}\n`, 'the queued message gets its own answer, not the first');
    assert.equal(await first.exited, 0, first.stderr());
    assert.equal(first.stdout(), `${ANSWERS.slow}\n`);
    const { lastTurn } = await bed.client.transcript(id);
    assert.equal(lastTurn?.messageId, 2);
  });

  test('interrupt ends the running turn: chat prints the reason and exits 1', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-interrupt');
    const chat = await startChat(id, MESSAGES.forever);
    await until('the model call', async () => ((await activityOf(id)) === 'calling-model' ? true : undefined));
    const interrupted = await cli('interrupt', id);
    assert.equal(interrupted.code, 0, interrupted.stderr);
    assert.equal(interrupted.stdout, `session ${id}: turn 1 (message 1) ended: interrupted (interrupted by a person)\n`);
    assert.equal(await chat.exited, 1, chat.stderr());
    assert.equal(chat.stdout(), '', 'no answer');
    assert.match(chat.stderr(), /^turn 1 \(message 1\) ended: interrupted \(interrupted by a person\)$/m);

    const again = await cli('interrupt', id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no turn is running; there is nothing to interrupt/);
  });

  test('Ctrl-C stops following and says the turn goes on; the turn does go on', { timeout: 90_000 }, async () => {
    const id = uniqueId('chat-sigint');
    const chat = await startChat(id, MESSAGES.forever);
    await until('the model call', async () => ((await activityOf(id)) === 'calling-model' ? true : undefined));
    chat.child.kill('SIGINT');
    assert.equal(await chat.exited, 130, chat.stderr());
    assert.match(chat.stderr(), new RegExp(`stopped following session ${id}; its turn goes on without you \\(agent-sessions transcript ${id} shows it, agent-sessions interrupt ${id} stops it\\)`));
    assert.equal(await activityOf(id), 'calling-model', 'the turn was not interrupted');
    await bed.client.interrupt(id);
  });

  test('a refused message exits 1 naming the rule, and a closed session says so', { timeout: 60_000 }, async () => {
    const id = uniqueId('chat-refused');
    const empty = await cli('chat', id, '   ');
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /the message is empty; say what the agent should do/);
    assert.doesNotMatch(empty.stderr, /\n\s+at /, 'no stack trace');

    await bed.client.start(id);
    await bed.client.close(id);
    const closed = await cli('chat', id, 'Anything');
    assert.equal(closed.code, 1);
    assert.match(closed.stderr, /is closed/);
    const transcript = await cli('transcript', id);
    assert.equal(transcript.code, 0, 'a closed session keeps its transcript readable');
    assert.match(transcript.stdout, /no messages yet/);
  });
});
