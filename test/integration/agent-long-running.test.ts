import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SessionClient } from '../../src/client';
import { runCount } from '../../src/history';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import { replaySession, startWorker, temporalAddress, uniqueId, type TestWorker } from '../helpers';

const taskQueue = uniqueId('agent-long');
const turns = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'].map((word) => `${word} question: ${'x'.repeat(1500)}`);
// One conversation per question, matched by it: once older turns are dropped to fit the
// context, the request's first user message is the current question.
const script = {
  description: 'Long questions that overflow a small context.',
  conversations: turns.map((text, i) => ({ name: `q${i}`, match: { firstUserMessage: `^${text.split(':')[0]}` }, steps: [{ respond: { content: `answer ${i}` } }] })),
} as ScriptJson;

let model: ModelServer;
let worker: TestWorker;
let client: SessionClient;

before(async () => {
  model = await startModelServer({ script });
  worker = await startWorker({ allowParallelInProgress: true }, taskQueue, { agent: { baseUrl: model.url, model: 'scripted', maxContextChars: 2000 } });
  client = await SessionClient.connect({ address: await temporalAddress(), taskQueue, continueAsNewAfter: 10 });
});

after(async () => {
  await client.closeConnection();
  await worker.stop();
  await model.close();
});

async function ask(id: string, text: string): Promise<string | null> {
  const { messageId } = await client.sendMessage(id, text);
  for (let i = 0; i < 300; i++) {
    const s = await client.session(id);
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
  const transcript = await client.transcript(id);
  assert.equal(transcript.compacted, true);
  assert.match((transcript.messages[0] as { content: string }).content, /^\[context compacted\] \d+ earlier messages were dropped/);
  assert.deepEqual(transcript.messages.slice(-2).map((m) => m.content), [turns[5], 'answer 5']);
  assert.equal(transcript.usage.model_calls, 6);
  // Six turns are twelve applied events (a turn/start and a turn/end each): past 10 the session
  // continued as new, and the conversation and usage came along.
  assert.ok(runCount(await client.exportHistory(id)) >= 2, 'the session continued as new');
  assert.equal(await ask(id, turns[0]!), 'answer 0', 'it still answers after continuing');
  assert.equal((await client.usage(id)).session.model_calls, 7);
  for (const policy of [{ allowParallelInProgress: true }, { allowParallelInProgress: false }]) {
    assert.equal((await replaySession(client, id, policy)).final.turn, 7);
  }
});
