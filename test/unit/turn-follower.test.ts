import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { followTurn, TurnFollower } from '../../src/cli/follow-turn';
import { isRejectedWrite, renderToolCall, renderToolResult, renderTranscript, renderUsageTable, shorten } from '../../src/cli/render-agent';
import {
  INITIAL_AGENT_STATE,
  INITIAL_SESSION_STATE,
  NO_USAGE,
  snapshotSession,
  type AgentState,
  type ChatMessage,
  type SessionSnapshot,
  type SessionState,
  type TurnOutcome,
} from '../../src/session';
import type { TodoItem } from '../../src/todo';
import type { Transcript } from '../../workflows/messages';

const ID = 'chat-1';
const PLAN: TodoItem[] = [
  { content: 'Run lint', status: 'in_progress' },
  { content: 'Fix the errors', status: 'pending' },
];

function call(id: string, name: string, args: unknown): ChatMessage {
  return { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
}
const result = (id: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content });
const ended = (messageId: number, reason: TurnOutcome['reason'], answer: string | null, detail: string | null = null): TurnOutcome => ({
  turn: messageId,
  messageId,
  reason,
  answer,
  detail,
  endedAt: '2025-01-01T00:00:00.000Z',
});

/** A session at one moment: its state, its agent's state, and the transcript the agent state gives. */
function moment(session: Partial<SessionState>, agent: Partial<AgentState>): { snapshot: SessionSnapshot; transcript: Transcript } {
  const fullAgent: AgentState = { ...INITIAL_AGENT_STATE, ...agent };
  const snapshot = snapshotSession(ID, { ...INITIAL_SESSION_STATE, ...session }, {}, fullAgent);
  const transcript: Transcript = { sessionId: ID, messages: fullAgent.conversation, compacted: fullAgent.compacted, usage: fullAgent.usage, lastTurn: fullAgent.lastTurn };
  return { snapshot, transcript };
}
const calls = (n: number) => ({ ...NO_USAGE, model_calls: n });

describe('following a turn from the outside', () => {
  test("a turn's tool calls, results and list changes are told once each, in order, and the answer is not", () => {
    const follower = new TurnFollower(ID, { messageId: 1, queued: false, ahead: 0 }, 'Fix the lint errors');
    const user: ChatMessage = { role: 'user', content: 'Fix the lint errors' };
    const write = call('call_0', 'todo_write', { todos: PLAN });

    const starting = moment({ turn: 0 }, { activity: { state: 'starting', messageId: 1 }, queue: [] });
    assert.deepEqual(follower.observe(starting.snapshot, starting.transcript), []);

    const calling = moment({ turn: 1, turnOpen: true, version: 1 }, { activity: { state: 'running-tools', turn: 1, step: 1, tools: ['todo_write'] }, conversation: [user, write], usage: calls(1) });
    const first = follower.observe(calling.snapshot, calling.transcript);
    assert.equal(first.length, 1);
    assert.match(first[0]!, /^→ todo_write \{"todos":\[\{"content":"Run lint","status":"in_progress"\}/);

    const written = moment(
      { turn: 1, turnOpen: true, version: 2, todos: PLAN },
      { activity: { state: 'calling-model', turn: 1, step: 2 }, conversation: [user, write, result('call_0', 'Updated todo list: 1 pending, 1 in progress, 0 completed')], usage: calls(1) },
    );
    assert.deepEqual(follower.observe(written.snapshot, written.transcript), [
      '← Updated todo list: 1 pending, 1 in progress, 0 completed',
      'todo list:',
      '  [>] Run lint\n  [ ] Fix the errors',
    ]);
    assert.deepEqual(follower.observe(written.snapshot, written.transcript), [], 'nothing is told twice');
    assert.equal(follower.outcome(written.snapshot), undefined);

    const answer: ChatMessage = { role: 'assistant', content: 'Lint is clean.' };
    const done = moment({ turn: 1, version: 3, todos: PLAN }, { conversation: [user, write, written.transcript.messages[2]!, answer], lastTurn: ended(1, 'completed', 'Lint is clean.'), usage: calls(2) });
    assert.deepEqual(follower.observe(done.snapshot, done.transcript), [], 'the turn ended (a new version) but the list is the same: not shown again');
    assert.equal(follower.outcome(done.snapshot)?.answer, 'Lint is clean.');
  });

  test('every accepted list is shown, in order, even one replaced before the next poll, and a refused one is not', () => {
    const follower = new TurnFollower(ID, { messageId: 1, queued: false, ahead: 0 }, 'Go');
    const second: TodoItem[] = [{ content: 'Run lint', status: 'completed' }, { content: 'Fix the errors', status: 'in_progress' }];
    const conversation: ChatMessage[] = [
      { role: 'user', content: 'Go' },
      call('c0', 'todo_write', { todos: [{ content: 'A', status: 'in_progress' }, { content: 'A', status: 'pending' }] }),
      result('c0', 'todo_write rejected: todos[1].content repeats todos[0] [duplicate-content]'),
      call('c1', 'todo_write', { todos: PLAN.map((t) => ({ ...t, content: `  ${t.content} ` })) }),
      result('c1', 'Updated todo list: 1 pending, 1 in progress, 0 completed'),
      call('c2', 'todo_write', { todos: second }),
      result('c2', 'Updated todo list: 0 pending, 1 in progress, 1 completed'),
    ];
    const later = moment({ turn: 1, turnOpen: true, version: 3, todos: second }, { activity: { state: 'calling-model', turn: 1, step: 4 }, conversation, usage: calls(3) });
    const lines = follower.observe(later.snapshot, later.transcript);
    assert.deepEqual(lines.filter((line) => line.startsWith('  [')), ['  [>] Run lint\n  [ ] Fix the errors', '  [x] Run lint\n  [>] Fix the errors'], 'stored contents are trimmed');
    assert.equal(lines.filter((line) => line === 'todo list:').length, 2, 'the session list equals the last one written: not shown a third time');
  });

  test('a refused todo_write is marked as rejected, an accepted one is not', () => {
    const refusal = 'todo_write rejected: at most one todo may be in_progress at a time (got 2: todos[0], todos[1]) [parallel-in-progress]';
    assert.equal(isRejectedWrite('todo_write', refusal), true);
    assert.equal(isRejectedWrite('todo_write', 'Updated todo list: 0 pending, 1 in progress, 2 completed'), false);
    assert.equal(isRejectedWrite('read_file', 'the file says: rejected [x]'), false, 'only a todo_write result is a refused write');
    assert.equal(renderToolResult('todo_write', refusal), `← ✗ REJECTED [parallel-in-progress] ${refusal}`);
    const long = `todo_write rejected: ${'a very long reason '.repeat(20)}[duplicate-content]`;
    assert.match(renderToolResult('todo_write', long), /^← ✗ REJECTED \[duplicate-content\] todo_write rejected: a very long .*more characters\)$/, 'the rule survives shortening');
    assert.equal(renderToolResult('todo_write', 'Updated todo list: 1 pending, 0 in progress, 0 completed'), '← Updated todo list: 1 pending, 0 in progress, 0 completed');
  });

  test('a message queued behind another turn tells nothing of that turn, only what it waits for', () => {
    const follower = new TurnFollower(ID, { messageId: 2, queued: true, ahead: 1 }, 'Second');
    const earlier: ChatMessage[] = [{ role: 'user', content: 'First' }, call('call_a', 'read_file', { path: 'README.md' })];
    const pending = { callId: 'call_a', name: 'read_file', arguments: '{"path":"README.md"}', since: null };
    const waiting = moment(
      { turn: 1, turnOpen: true, version: 1, todos: PLAN },
      { activity: { state: 'waiting-approval', turn: 1, step: 1, callIds: ['call_a'] }, conversation: earlier, pendingApprovals: [pending], queue: [{ id: 2, text: 'Second', at: null }], usage: calls(1) },
    );
    const lines = follower.observe(waiting.snapshot, waiting.transcript);
    assert.equal(lines[0], 'message 2 is queued behind 1 other; following it until its own turn ends');
    assert.equal(
      lines[1],
      `waiting for approval: call call_a read_file {"path":"README.md"} — agent-sessions approve ${ID} call_a (or: agent-sessions deny ${ID} call_a --reason TEXT)`,
    );
    assert.equal(lines.length, 2, 'the turn ahead, its call and its list are not this message’s story');
    assert.equal(follower.turnStarted(waiting.snapshot), false);

    const own: ChatMessage[] = [...earlier, result('call_a', 'README text'), { role: 'assistant', content: 'Done first.' }, { role: 'user', content: 'Second' }, call('call_b', 'list_files', {})];
    const running = moment({ turn: 2, turnOpen: true, version: 3, todos: null }, { activity: { state: 'running-tools', turn: 2, step: 1, tools: ['list_files'] }, conversation: own, lastTurn: ended(1, 'completed', 'Done first.'), usage: calls(3) });
    assert.equal(follower.turnStarted(running.snapshot), true);
    assert.deepEqual(follower.observe(running.snapshot, running.transcript), ['→ list_files {}'], "the earlier turn's result is not told; a null list is not shown");
  });

  test('a transcript read after the snapshot, already past it, is set aside instead of hiding the first call', () => {
    const follower = new TurnFollower(ID, { messageId: 1, queued: false, ahead: 0 }, 'Go');
    const snapshot = moment({}, { activity: { state: 'starting', messageId: 1 } }).snapshot;
    const ahead = moment({ turn: 1 }, { conversation: [{ role: 'user', content: 'Go' }, call('call_x', 'todo_write', { todos: [] })], usage: calls(1) }).transcript;
    assert.deepEqual(follower.observe(snapshot, ahead), []);
    assert.equal(follower.transcriptSkipped, true);
    const later = moment({ turn: 1, turnOpen: true }, { activity: { state: 'running-tools', turn: 1, step: 1, tools: ['todo_write'] }, conversation: ahead.messages, usage: calls(1) });
    assert.deepEqual(follower.observe(later.snapshot, later.transcript), ['→ todo_write {"todos":[]}']);
    assert.equal(follower.transcriptSkipped, false);
  });

  test("a turn that ended, and the queued one after it too, between two looks is still found with its own answer", () => {
    const follower = new TurnFollower(ID, { messageId: 1, queued: false, ahead: 0 }, 'First');
    const first = ended(1, 'completed', 'First done.');
    const second = ended(2, 'completed', 'Second done.');
    const later = moment({ turn: 2, version: 4 }, { lastTurn: second, recentTurns: [first, second] });
    assert.equal(follower.outcome(later.snapshot)?.answer, 'First done.');
    const queued = new TurnFollower(ID, { messageId: 2, queued: true, ahead: 1 }, 'Second');
    assert.equal(queued.outcome(later.snapshot)?.answer, 'Second done.');
    // A state carried from a run that kept only the last turn still answers that one.
    const { recentTurns: _kept, ...before } = { ...INITIAL_AGENT_STATE, lastTurn: second };
    const carried = snapshotSession(ID, { ...INITIAL_SESSION_STATE, turn: 2 }, {}, before);
    assert.deepEqual(carried.agent.recentTurns, [second]);
  });

  test('a session closed before the message got its turn is known to never answer it', () => {
    const follower = new TurnFollower(ID, { messageId: 3, queued: true, ahead: 1 }, 'Third');
    const closed = moment({ closed: true }, { lastTurn: ended(2, 'closed', null, 'the session was closed during the turn'), queue: [{ id: 3, text: 'Third', at: null }] });
    assert.equal(follower.neverRuns(closed.snapshot), true);
    assert.equal(follower.outcome(closed.snapshot), undefined);
  });

  test('followTurn polls until the turn of its message ends, reading the transcript only when the revision moved', async () => {
    const user: ChatMessage = { role: 'user', content: 'Hi' };
    const moments = [
      moment({}, { activity: { state: 'starting', messageId: 1 }, revision: 1 }),
      moment({ turn: 1, turnOpen: true }, { activity: { state: 'calling-model', turn: 1, step: 1 }, conversation: [user], revision: 2 }),
      moment({ turn: 1, turnOpen: true }, { activity: { state: 'calling-model', turn: 1, step: 1 }, conversation: [user], revision: 2 }),
      moment({ turn: 1, turnOpen: true }, { activity: { state: 'calling-model', turn: 2, step: 2 }, conversation: [user, call('c1', 'list_files', {}), result('c1', 'a.ts')], usage: calls(1), revision: 5 }),
      moment({ turn: 1 }, { conversation: [user, call('c1', 'list_files', {}), result('c1', 'a.ts'), { role: 'assistant', content: 'Hello' }], lastTurn: ended(1, 'completed', 'Hello'), usage: calls(2), revision: 7 }),
    ];
    let i = 0;
    let transcripts = 0;
    let current = moments[0]!;
    const client = {
      session: async () => (current = moments[Math.min(i++, moments.length - 1)]!).snapshot,
      transcript: async () => {
        transcripts++;
        return current.transcript;
      },
    };
    const said: string[] = [];
    const followed = await followTurn(client, ID, { messageId: 1, queued: false, ahead: 0 }, 'Hi', (line) => said.push(line), { pollMs: 1 });
    assert.deepEqual(followed, { ended: true, outcome: ended(1, 'completed', 'Hello') });
    assert.deepEqual(said, ['→ list_files {}', '← a.ts']);
    assert.equal(transcripts, 4, 'the third snapshot has the revision of the second: no transcript read');
  });

  test('followTurn stops when its signal aborts, leaving the turn to run', async () => {
    const stop = new AbortController();
    const running = moment({ turn: 1, turnOpen: true }, { activity: { state: 'calling-model', turn: 1, step: 1 } });
    let polls = 0;
    const client = {
      session: async () => {
        if (++polls === 3) stop.abort();
        return running.snapshot;
      },
      transcript: async () => running.transcript,
    };
    const followed = await followTurn(client, ID, { messageId: 1, queued: false, ahead: 0 }, 'Hi', () => undefined, { pollMs: 1, signal: stop.signal });
    assert.deepEqual(followed, { ended: false, why: 'stopped' });
    assert.equal(polls, 3);
  });
});

describe('rendering the conversation', () => {
  test('the transcript labels roles, names each result by its tool, cuts long results and marks a refused write', () => {
    const long = 'x'.repeat(2000);
    const transcript: Transcript = {
      sessionId: ID,
      messages: [
        { role: 'user', content: 'Fix the lint errors' },
        call('call_0', 'todo_write', { todos: [{ content: 'A', status: 'in_progress' }, { content: 'B', status: 'in_progress' }] }),
        result('call_0', 'todo_write rejected: at most one todo may be in_progress at a time [parallel-in-progress]'),
        call('call_1', 'read_file', { path: 'big.txt' }),
        result('call_1', long),
        { role: 'assistant', content: 'Done.\nAll clean.' },
      ],
      compacted: true,
      usage: { prompt_tokens: 1200, completion_tokens: 34, total_tokens: 1234, model_calls: 3, output_chars: 200, todo_write_chars: 120 },
      lastTurn: ended(1, 'completed', 'Done.\nAll clean.'),
    };
    const text = renderTranscript(transcript);
    const lines = text.split('\n');
    assert.equal(lines[0], '(older messages were dropped to fit the context)');
    assert.equal(lines[1], 'user       Fix the lint errors');
    assert.match(lines[2]!, /^assistant {2}→ todo_write \{"todos":.*\} {2}\[call_0\]$/);
    assert.match(lines[3]!, /^tool {7}← ✗ REJECTED todo_write \[call_0\]: todo_write rejected: .*\[parallel-in-progress\]$/);
    assert.match(text, /← read_file \[call_1\]: x{600}… \(1400 more characters\)/);
    assert.match(text, /assistant {2}Done\.\n {11}All clean\./);
    assert.match(text, /turn 1 \(message 1\) completed\nusage: 1,234 tokens \(1,200 prompt \+ 34 completion\) in 3 model calls; 200 output chars, 120 of them todo_write$/);
  });

  test('one-line renderings stay short whatever the model sent', () => {
    const args = JSON.stringify({ todos: Array.from({ length: 50 }, (_, i) => ({ content: `item ${i}`, status: 'pending' })) });
    const line = renderToolCall({ id: 'c', type: 'function', function: { name: 'todo_write', arguments: args } });
    assert.ok(line.length < 220, line);
    assert.match(line, /… \(\d+ more characters\)$/);
    assert.equal(shorten('abc', 3), 'abc');
    assert.equal(renderToolResult('read_file', 'line one\n  line two'), '← line one line two');
  });

  test('the usage table puts the session beside its tree, one row per field of the contract', () => {
    const session = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, model_calls: 1, output_chars: 40, todo_write_chars: 30 };
    const tree = { prompt_tokens: 110, completion_tokens: 25, total_tokens: 135, model_calls: 4, output_chars: 90, todo_write_chars: 60 };
    const table = renderUsageTable(ID, { session, tree }).split('\n');
    assert.equal(table.length, 8);
    assert.match(table[2]!, /^prompt_tokens\s+10\s+110$/);
    assert.match(table[7]!, /^todo_write_chars\s+30\s+60$/);
  });
});
