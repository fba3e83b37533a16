import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCount } from '../../src/history';
import type { ScriptJson } from '../../src/model-server';
import { replaySession, uniqueId, useTestBed } from '../helpers';

const turns = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'].map((word) => `${word} question: ${'x'.repeat(1500)}`);
// One conversation per question, matched by it: once older turns are dropped to fit the
// context, the request's first user message is the current question.
const script = {
  description: 'Long questions that overflow a small context.',
  conversations: turns.map((text, i) => ({ name: `q${i}`, match: { firstUserMessage: `^${text.split(':')[0]}` }, steps: [{ respond: { content: `answer ${i}` } }] })),
} as ScriptJson;

const bed = useTestBed('agent-long', { allowParallelInProgress: true }, {
  model: { script },
  worker: { agent: { model: 'scripted', maxContextChars: 2000 } },
  client: { continueAsNewAfter: 10 },
});

async function ask(id: string, text: string): Promise<string | null> {
  const { messageId } = await bed.client.sendMessage(id, text);
  for (let i = 0; i < 300; i++) {
    const s = await bed.client.session(id);
    if (s.agent.lastTurn?.messageId === messageId && !s.turnOpen) {
      assert.equal(s.agent.lastTurn.reason, 'completed', s.agent.lastTurn.detail ?? '');
      return s.agent.lastTurn.answer;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`no answer to message ${messageId}`);
}

test('a conversation past AGENT_SESSIONS_MAX_CONTEXT_CHARS drops its oldest turns, says so, and is carried across continue-as-new', async () => {
  const id = uniqueId('long-talk');
  for (const [i, text] of turns.entries()) assert.equal(await ask(id, text), `answer ${i}`);
  const transcript = await bed.client.transcript(id);
  assert.equal(transcript.compacted, true);
  assert.match((transcript.messages[0] as { content: string }).content, /^\[context compacted\] \d+ earlier messages were dropped/);
  assert.deepEqual(transcript.messages.slice(-2).map((m) => m.content), [turns[5], 'answer 5']);
  assert.equal(transcript.usage.model_calls, 6);
  // Six turns are twelve applied events (a turn/start and a turn/end each): past 10 the session
  // continued as new, and the conversation and usage came along.
  assert.ok(runCount(await bed.client.exportHistory(id)) >= 2, 'the session continued as new');
  assert.equal(await ask(id, turns[0]!), 'answer 0', 'it still answers after continuing');
  assert.equal((await bed.client.usage(id)).session.model_calls, 7);
  for (const policy of [{ allowParallelInProgress: true }, { allowParallelInProgress: false }]) {
    assert.equal((await replaySession(bed.client, id, policy)).final.turn, 7);
  }
});
