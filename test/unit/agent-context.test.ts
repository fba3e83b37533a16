import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  acceptInterrupt,
  acceptToolDecision,
  acceptUserMessage,
  boundToolResult,
  compactConversation,
  INITIAL_AGENT_STATE,
  MAX_TOOL_RESULT_CHARS,
  MAX_QUEUED_MESSAGES,
  MAX_USER_MESSAGE_CHARS,
  messageChars,
  messagesForModel,
  nudgeMessage,
  type ChatMessage,
} from '../../src/session';
import { Rejection } from '../../src/todo';

const user = (content: string): ChatMessage => ({ role: 'user', content });
const said = (content: string): ChatMessage => ({ role: 'assistant', content });
const call = (id: string, args = '{}'): ChatMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'todo_write', arguments: args } }] });
const result = (id: string, content: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content });
const total = (messages: ChatMessage[]) => messages.reduce((sum, m) => sum + messageChars(m), 0);

function rule(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    assert.ok(error instanceof Rejection);
    return error.rule;
  }
  return 'accepted';
}

describe('compaction', () => {
  test('a conversation within the budget is left as it is', () => {
    const conversation = [user('a'), said('b')];
    assert.deepEqual(compactConversation(conversation, 100, 0), { conversation, turnStart: 0, dropped: 0 });
  });

  test('earlier turns go first, oldest first, with a note saying how many; the current turn stays whole when it can', () => {
    const old = [user('x'.repeat(400)), said('y'.repeat(400)), user('z'.repeat(400)), said('w'.repeat(400))];
    const current = [user('now'), call('c1'), result('c1', 'ok')];
    const compacted = compactConversation([...old, ...current], 1000, old.length);
    assert.ok(compacted.dropped > 0);
    assert.match((compacted.conversation[0] as { content: string }).content, /^\[context compacted\] \d+ earlier messages were dropped/);
    assert.deepEqual(compacted.conversation.slice(compacted.turnStart), current);
    assert.ok(total(compacted.conversation) <= 1000);
  });

  test('a tool result never stays without its call, and the turn keeps its first message and last exchange', () => {
    const conversation = [user('the task'), call('c1'), result('c1', 'r'.repeat(900)), call('c2'), result('c2', 'r'.repeat(900)), call('c3'), result('c3', 'last')];
    const { conversation: kept } = compactConversation(conversation, 1000, 0);
    assert.deepEqual(kept[1], user('the task'));
    assert.deepEqual(kept.slice(-2), [call('c3'), result('c3', 'last')]);
    for (const [i, message] of kept.entries()) {
      if (message.role !== 'tool') continue;
      const before = kept[i - 1];
      assert.ok(before?.role === 'tool' || (before?.role === 'assistant' && (before.tool_calls ?? []).some((c) => c.id === message.tool_call_id)), `result ${i} has its call`);
    }
  });

  test('compacting twice counts every dropped message in one note', () => {
    const conversation = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? user(`q${i}`.padEnd(200, '.')) : said(`a${i}`.padEnd(200, '.'))));
    const once = compactConversation(conversation, 2500, 18);
    const twice = compactConversation([...once.conversation, user('more'.padEnd(2000, '.'))], 2500, once.conversation.length);
    const count = (m: ChatMessage) => Number(/(\d+) earlier/.exec((m as { content: string }).content)?.[1]);
    assert.equal(count(twice.conversation[0]!), once.dropped + twice.dropped);
  });
});

describe('what the model is shown', () => {
  test('after compaction, the current list — the session\'s fold, not a copy — comes right after the system prompt', () => {
    const todos = [{ content: 'Run lint', status: 'completed' as const }, { content: 'Fix the errors', status: 'in_progress' as const }];
    const shown = messagesForModel('You are an agent.', [user('go')], true, todos);
    assert.equal(shown[0]?.role, 'system');
    assert.match((shown[1] as { content: string }).content, /Your current todo list[\s\S]*\[x\] Run lint\n\[>\] Fix the errors/);
    assert.deepEqual(shown.at(-1), user('go'));
    assert.equal(messagesForModel('p', [user('go')], false, todos).length, 2, 'before any compaction the list is in the conversation already');
  });

  test('a tool result longer than the bound is cut, saying how much was left out', () => {
    const cut = boundToolResult('x'.repeat(MAX_TOOL_RESULT_CHARS + 500));
    assert.ok(cut.length <= MAX_TOOL_RESULT_CHARS);
    assert.match(cut, /more characters not shown/);
    assert.equal(boundToolResult('short'), 'short');
  });

  test('the nudge names each open todo and what to do; a finished list gets none', () => {
    assert.equal(nudgeMessage([{ content: 'Done', status: 'completed' }]), undefined);
    assert.equal(nudgeMessage(null), undefined);
    assert.match(nudgeMessage([{ content: 'Run lint', status: 'pending' }, { content: 'Done', status: 'completed' }])!, /^1 todo is still open: "Run lint" \(pending\); continue the work, or update the list/);
  });
});

describe("the agent's requests, judged by validators", () => {
  test('user/message: text required, not empty, bounded, and not to a closed session', () => {
    assert.deepEqual(acceptUserMessage({ text: 'hi' }, false), { text: 'hi' });
    assert.equal(rule(() => acceptUserMessage({ text: '  ' }, false)), 'empty-message');
    assert.equal(rule(() => acceptUserMessage({ text: 'x'.repeat(MAX_USER_MESSAGE_CHARS + 1) }, false)), 'message-too-long');
    assert.equal(rule(() => acceptUserMessage({ text: 'hi' }, true)), 'session-closed');
    assert.equal(rule(() => acceptUserMessage({ text: 'hi', extra: 1 }, false)), 'shape');
    assert.equal(rule(() => acceptUserMessage('hi', false)), 'shape');
    assert.deepEqual(acceptUserMessage({ text: 'hi' }, false, MAX_QUEUED_MESSAGES - 1), { text: 'hi' }, 'one more may queue');
    assert.equal(rule(() => acceptUserMessage({ text: 'hi' }, false, MAX_QUEUED_MESSAGES)), 'queue-full');
  });

  test('tool/approve and tool/deny name a call that waits; turn/interrupt needs a running turn', () => {
    const waiting = { ...INITIAL_AGENT_STATE, pendingApprovals: [{ callId: 'c1', name: 'read_file', arguments: '{}', since: null }] };
    assert.deepEqual(acceptToolDecision('tool/approve', { callId: 'c1' }, waiting), { callId: 'c1' });
    assert.equal(rule(() => acceptToolDecision('tool/deny', { callId: 'c2' }, waiting)), 'no-pending-call');
    assert.equal(rule(() => acceptToolDecision('tool/deny', { callId: 'c1', reason: 5 }, waiting)), 'shape');
    assert.equal(rule(() => acceptInterrupt(INITIAL_AGENT_STATE)), 'no-running-turn');
    assert.doesNotThrow(() => acceptInterrupt({ ...INITIAL_AGENT_STATE, activity: { state: 'calling-model', turn: 1, step: 1 } }));
  });
});
