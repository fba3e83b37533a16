import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { openSse, readAnswer } from '../../bench/sse-client';
import type { SessionClient } from '../../src/client';
import { startHttpServer, type HttpServer } from '../../src/http/server';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import type { LiveAnswer, ModelStreamEvent } from '../../src/session/model-stream';
import { connectClient, replaySession, temporalAddress, testStreamStore, until, uniqueId } from '../helpers';
import { killStrays, startWorkerProcess } from './fault-helpers';

const TASK = 'Explain the outage';
/** 120 tokens at 20 a second: six seconds of words, long enough to kill the worker in the middle. */
const EXPLANATION = 'The cache expired all at once, and every request went to the database. '.repeat(7).trim();
const SCRIPT: ScriptJson = {
  conversations: [
    {
      name: 'outage',
      match: { firstUserMessage: TASK },
      steps: [
        { respond: { content: 'Let me plan.', tool_calls: [{ name: 'todo_write', arguments: { todos: [{ content: 'Explain it', status: 'in_progress' }] } }] } },
        { respond: { content: EXPLANATION } },
      ],
    },
  ],
};

let model: ModelServer | undefined;
let http: HttpServer | undefined;
let client: SessionClient | undefined;

after(async () => {
  await http?.close();
  await client?.closeConnection();
  await model?.close();
  await killStrays();
});

test('a worker SIGKILLed while the model streams: readers get a reset and then the whole answer once more, and no model call that completed is made again', { timeout: 180_000 }, async (t) => {
  const taskQueue = uniqueId('stream-kill');
  const address = await temporalAddress();
  model = await startModelServer({ script: SCRIPT, streaming: { tokensPerSecond: 20 } });
  // The worker processes write to the store this process reads (its location is in their environment).
  const streamStore = testStreamStore();
  const env = { OPENAI_BASE_URL: model.url, AGENT_SESSIONS_MODEL: 'scripted', AGENT_SESSIONS_NUDGE: 'false', AGENT_SESSIONS_STREAM_STORE: process.env.AGENT_SESSIONS_STREAM_STORE! };
  const first = await startWorkerProcess(address, taskQueue, 60_000, env);
  client = await connectClient(taskQueue);
  http = await startHttpServer({ client, port: 0, streamStore });
  const sessionId = uniqueId('outage');
  await client.start(sessionId);

  const reading = await openSse(`${http.url}/sessions/${encodeURIComponent(sessionId)}/stream`);
  assert.equal(reading.status, 200);
  const events: ModelStreamEvent[] = [];
  let answer: LiveAnswer | null = null;
  const done = readAnswer(reading, {
    timeoutMs: 150_000,
    // The planning call ends first; the explanation is the one cut and made again.
    done: (shown) => shown.outcome === 'completed' && shown.text === EXPLANATION,
    onEvent: (event, shown) => {
      events.push(event);
      answer = shown;
    },
  });

  const sent = await client.sendMessage(sessionId, TASK);
  // Killed once the explanation is being written and a reader has some of it.
  await until('the explanation to be half written', () => (answer !== null && (answer as LiveAnswer).text.length > 40 && EXPLANATION.startsWith((answer as LiveAnswer).text) ? true : undefined), 60_000, { everyMs: 20 });
  await first.kill();
  const killedAt = Date.now();
  await startWorkerProcess(address, taskQueue, 60_000, env);
  const read = await done;
  assert.equal(read.answer?.text, EXPLANATION);
  assert.equal(read.answer?.outcome, 'completed');
  t.diagnostic(`the whole answer reached the reader ${Date.now() - killedAt} ms after the kill`);

  const outcome = await until('the turn to end', async () => {
    const last = (await client!.session(sessionId)).agent.lastTurn;
    return last?.messageId === sent.messageId ? last : undefined;
  }, 60_000);
  assert.equal(outcome.reason, 'completed', outcome.detail ?? '');
  assert.equal(outcome.answer, EXPLANATION);

  // The reader saw the cut call's words, then a reset of that very call, then the answer whole.
  const resetAt = events.findIndex((event) => event.type === 'reset');
  assert.ok(resetAt > 0, `a reset was published: ${JSON.stringify(events.map((event) => event.type))}`);
  const reset = events[resetAt] as Extract<ModelStreamEvent, { type: 'reset' }>;
  assert.ok(reset.attempt >= 2);
  const cut = events.slice(0, resetAt).filter((event) => event.call === reset.call);
  assert.equal(cut[0]?.type, 'start', 'the first attempt had started the same call');
  assert.ok(!cut.some((event) => event.type === 'end'), 'the cut attempt never ended');
  const after = events.slice(resetAt).filter((event) => event.type === 'text' && event.call === reset.call).map((event) => (event as { text: string }).text);
  assert.equal(after.join(''), EXPLANATION);

  // At the model: the planning call answered once; the explanation cut once and answered once; nothing after.
  const requests = model.requests();
  const completed = requests.filter((r) => r.completed).map((r) => r.step);
  assert.deepEqual(completed, [0, 1], JSON.stringify(requests));
  assert.deepEqual(requests.filter((r) => !r.completed).map((r) => r.step), [1], 'only the call in flight at the kill was cut');
  const lastCompletedAt = requests.findIndex((r) => r.completed && r.step === 1);
  assert.equal(lastCompletedAt, requests.length - 1, 'no model call was made after the answer came back');
  for (const policy of [{ allowParallelInProgress: true }, { allowParallelInProgress: false }]) await replaySession(client, sessionId, policy);
});
