import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SessionClient } from '../../src/client';
import type { TurnOutcome, Usage } from '../../src/session';
import { TRACED_CHAT, tracedChatScript } from '../fixtures/traced-chat';
import { replaySessionHistory } from '../../src/worker';
import { httpCall, startTestBed, until, uniqueId, useTestBed } from '../helpers';
import { inMemoryTracing, wholeTrace } from '../tracing-helpers';

const traced = inMemoryTracing();
const { tracing, exporter } = traced;
const MODEL = 'scripted-traced';
const bed = useTestBed(
  'tracing',
  { allowParallelInProgress: true },
  {
    model: { script: tracedChatScript(MODEL) },
    worker: { tracing: tracing.worker, agent: { model: MODEL } },
    client: { plugins: [tracing.clientPlugin] },
    http: { tracing },
  },
);

/** Waits for the turn of message `messageId` of `sessionId` to end. */
function turnEnded(client: SessionClient, sessionId: string, messageId: number): Promise<TurnOutcome> {
  return until(`the turn of message ${messageId}`, async () => (await client.session(sessionId)).agent.recentTurns.find((turn) => turn.messageId === messageId), 60_000);
}

/** Sends `text` inside a root span named like the CLI's, and waits for its turn to end. */
function chat(client: SessionClient, sessionId: string, text: string): Promise<TurnOutcome> {
  return tracing.inSpan('agent-sessions chat', {}, async () => turnEnded(client, sessionId, (await client.sendMessage(sessionId, text)).messageId));
}

const traceOf = (traceId: string, ready?: (spans: ReadableSpan[]) => boolean): Promise<ReadableSpan[]> => wholeTrace(traced, traceId, ready);

const named = (spans: ReadableSpan[], name: string): ReadableSpan[] => spans.filter((span) => span.name === name);
const one = (spans: ReadableSpan[], name: string): ReadableSpan => {
  const found = named(spans, name);
  assert.equal(found.length, 1, `one span named ${name}, got ${found.length}: ${spans.map((span) => span.name).join(', ')}`);
  return found[0]!;
};
/** Whether `span` is below `ancestor` in `spans`. */
function isBelow(spans: ReadableSpan[], span: ReadableSpan, ancestor: ReadableSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  for (let parent = span.parentSpanId; parent !== undefined; parent = byId.get(parent)?.parentSpanId) {
    if (parent === ancestor.spanContext().spanId) return true;
  }
  return false;
}
const tokens = (spans: ReadableSpan[], sessionId: string, kind: 'input' | 'output'): number =>
  spans
    .filter((span) => span.name === `chat ${MODEL}` && span.attributes['gen_ai.conversation.id'] === sessionId)
    .reduce((sum, span) => sum + Number(span.attributes[`gen_ai.usage.${kind}_tokens`] ?? 0), 0);

describe('traces of turns', () => {
  const sessionId = uniqueId('traced');
  const childId = `${sessionId}/${TRACED_CHAT.subagent}`;
  let first: TurnOutcome;
  let second: TurnOutcome;
  let usageAfterFirst: Usage;
  let usageAfterSecond: Usage;
  let trace1: ReadableSpan[];
  let trace2: ReadableSpan[];

  before(async () => {
    await bed.ready;
    first = await chat(bed.client, sessionId, TRACED_CHAT.first);
    usageAfterFirst = (await bed.client.transcript(sessionId)).usage;
    second = await chat(bed.client, sessionId, TRACED_CHAT.second);
    usageAfterSecond = (await bed.client.transcript(sessionId)).usage;
    trace1 = await traceOf(first.traceId ?? '', (spans) => named(spans, 'invoke_agent ' + childId).length === 1 && named(spans, 'agent-sessions chat').length === 1);
    trace2 = await traceOf(second.traceId ?? '', (spans) => named(spans, 'agent-sessions chat').length === 1);
  });

  test('each turn is one trace of its own, rooted at the request that began it', () => {
    assert.equal(first.reason, 'completed');
    assert.equal(second.reason, 'completed');
    assert.match(first.traceId ?? '', /^[0-9a-f]{32}$/);
    assert.notEqual(first.traceId, second.traceId, 'a session is not one trace: each turn has its own');
    for (const spans of [trace1, trace2]) {
      const root = spans.find((span) => span.parentSpanId === undefined)!;
      assert.equal(root.name, 'agent-sessions chat');
      const turn = one(spans, `invoke_agent ${sessionId}`);
      assert.ok(isBelow(spans, turn, root));
      assert.equal(turn.attributes['gen_ai.operation.name'], 'invoke_agent');
      assert.equal(turn.attributes['gen_ai.conversation.id'], sessionId);
      assert.equal(turn.attributes['agent_sessions.turn.reason'], 'completed');
      // The user/message update the request sent, as the client sent it and as the session handled it.
      assert.ok(isBelow(spans, one(spans, 'HandleUpdate:user/message'), root));
      // The run of the workflow lasts for days: it is in no turn's trace.
      assert.equal(named(spans, 'RunWorkflow:agentSession').length, 0);
    }
  });

  test("the transcript names each turn's trace", async () => {
    const transcript = await bed.client.transcript(sessionId);
    assert.equal(transcript.lastTurn?.traceId, second.traceId);
    assert.deepEqual(
      transcript.recentTurns?.map((turn) => turn.traceId),
      [first.traceId, second.traceId],
    );
  });

  test("a turn holds every model call, tool call, todo_write and spawn, and the subagent's turn nested in it", () => {
    const turn = one(trace1, `invoke_agent ${sessionId}`);
    const chats = named(trace1, `chat ${MODEL}`).filter((span) => span.attributes['gen_ai.conversation.id'] === sessionId);
    // Five answers, and the first attempt that failed.
    assert.equal(chats.length, 6);
    const writes = named(trace1, 'execute_tool todo_write');
    assert.equal(writes.length, 3);
    const spawn = one(trace1, 'execute_tool spawn_subagent');
    for (const span of [...chats, ...writes, spawn]) assert.ok(isBelow(trace1, span, turn), `${span.name} is below the turn's span`);
    // Each write reaches the session as the same todo_write update any client sends.
    assert.equal(named(trace1, 'ValidateUpdate:todo_write').length, 3);
    assert.equal(named(trace1, 'HandleUpdate:todo_write').length, 2, 'the refused write never reached the handler');
    // The subagent's own turn is nested: the parent's turn waits for its answer.
    const childTurn = one(trace1, `invoke_agent ${childId}`);
    assert.ok(isBelow(trace1, childTurn, spawn));
    assert.ok(isBelow(trace1, one(trace1, 'StartChildWorkflow:agentSession'), spawn));
    const childChats = named(trace1, `chat ${MODEL}`).filter((span) => span.attributes['gen_ai.conversation.id'] === childId);
    assert.equal(childChats.length, 1);
    assert.ok(isBelow(trace1, childChats[0]!, childTurn));
    assert.equal(spawn.attributes['gen_ai.tool.call.id'], 'call_traced_2_0');
    assert.equal(spawn.kind, SpanKind.INTERNAL);
  });

  test('a model call is a CLIENT span with the GenAI attributes and the tokens the model reported', () => {
    const chats = named(trace1, `chat ${MODEL}`).filter((span) => span.status.code !== SpanStatusCode.ERROR);
    for (const span of chats) {
      assert.equal(span.kind, SpanKind.CLIENT);
      assert.equal(span.attributes['gen_ai.operation.name'], 'chat');
      assert.equal(span.attributes['gen_ai.provider.name'], 'openai');
      assert.equal(span.attributes['gen_ai.request.model'], MODEL);
      assert.equal(span.attributes['gen_ai.response.model'], MODEL);
      assert.ok(Array.isArray(span.attributes['gen_ai.response.finish_reasons']));
      assert.equal(span.attributes['server.address'], '127.0.0.1');
      // Contents are off unless OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true.
      assert.equal(span.attributes['gen_ai.input.messages'], undefined);
    }
    assert.equal(tokens(trace1, sessionId, 'input'), usageAfterFirst.prompt_tokens);
    assert.equal(tokens(trace1, sessionId, 'output'), usageAfterFirst.completion_tokens);
    assert.equal(tokens(trace2, sessionId, 'input'), usageAfterSecond.prompt_tokens - usageAfterFirst.prompt_tokens);
    assert.equal(tokens(trace2, sessionId, 'output'), usageAfterSecond.completion_tokens - usageAfterFirst.completion_tokens);
    assert.ok(usageAfterFirst.prompt_tokens > 0);
  });

  test('a retried model call shows both attempts, the failed one as an error', () => {
    const attempts = named(trace1, 'StartActivity:callModel')
      .map((started) => trace1.filter((span) => span.name === `chat ${MODEL}` && isBelow(trace1, span, started)))
      .find((chats) => chats.length > 1);
    assert.equal(attempts?.length, 2, 'the first model call has two attempts');
    const [failed, answered] = [...attempts!].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    assert.equal(failed!.status.code, SpanStatusCode.ERROR);
    assert.equal(failed!.attributes['error.type'], 'ModelUnavailable');
    assert.notEqual(answered!.status.code, SpanStatusCode.ERROR);
  });

  test('a refused todo_write is an error naming the first rule broken and listing every one', () => {
    const refused = named(trace1, 'execute_tool todo_write').filter((span) => span.status.code === SpanStatusCode.ERROR);
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!.attributes['error.type'], 'duplicate-content');
    assert.deepEqual(refused[0]!.attributes['agent_sessions.rejection.rules'], ['duplicate-content']);
    assert.equal(refused[0]!.attributes['gen_ai.tool.call.id'], 'call_traced_0_0');
    assert.match(refused[0]!.status.message ?? '', /duplicate-content/);
  });

  test("spans from the workflow keep the workflow's plain facts, not its nested objects", () => {
    const handled = named(trace1, 'HandleUpdate:user/message')[0]!;
    assert.equal(handled.attributes.workflowId, sessionId);
    assert.deepEqual(Object.keys(handled.attributes).sort(), ['attempt', 'namespace', 'runId', 'taskQueue', 'temporalUpdateId', 'workflowId', 'workflowType']);
  });
});

describe('traces of the HTTP service', () => {
  test('POST /sessions/{id}/messages is the root of the turn it begins; reads make no span', async () => {
    await bed.ready;
    const sessionId = uniqueId('http-traced');
    const sent = await httpCall(bed.http.url, 'POST', `/sessions/${encodeURIComponent(sessionId)}/messages`, { text: TRACED_CHAT.first });
    assert.equal(sent.status, 202, JSON.stringify(sent.json));
    const outcome = await turnEnded(bed.client, sessionId, sent.json.messageId);
    const spans = await traceOf(outcome.traceId ?? '', (s) => named(s, `invoke_agent ${sessionId}/${TRACED_CHAT.subagent}`).length === 1);
    const root = spans.find((span) => span.parentSpanId === undefined)!;
    assert.equal(root.name, 'POST /sessions/{id}/messages');
    assert.equal(root.kind, SpanKind.SERVER);
    assert.equal(root.attributes['http.route'], '/sessions/{id}/messages');
    assert.equal(root.attributes['http.response.status_code'], 202);
    assert.ok(isBelow(spans, one(spans, `invoke_agent ${sessionId}`), root));
    const read = await httpCall(bed.http.url, 'GET', `/sessions/${encodeURIComponent(sessionId)}/transcript`);
    assert.equal(read.json.lastTurn.traceId, outcome.traceId);
    await tracing.flush();
    assert.equal(exporter.getFinishedSpans().filter((span) => span.name.startsWith('GET')).length, 0);
  });

  test("a caller's traceparent is continued: the turn joins the caller's trace", async () => {
    await bed.ready;
    const sessionId = uniqueId('http-joined');
    const callerTrace = 'a'.repeat(32);
    const sent = await httpCall(bed.http.url, 'POST', `/sessions/${encodeURIComponent(sessionId)}/messages`, { text: TRACED_CHAT.first }, { traceparent: `00-${callerTrace}-${'b'.repeat(16)}-01` });
    assert.equal(sent.status, 202);
    const outcome = await turnEnded(bed.client, sessionId, sent.json.messageId);
    assert.equal(outcome.traceId, callerTrace);
  });
});

describe('untraced sessions', () => {
  test('with neither client nor worker tracing, a turn has no traceId and its history no trace header', async () => {
    const untraced = await startTestBed('untraced', { allowParallelInProgress: true }, { model: { script: tracedChatScript(MODEL) }, worker: { agent: { model: MODEL } } });
    try {
      const sessionId = uniqueId('untraced');
      const outcome = await turnEnded(untraced.client, sessionId, (await untraced.client.sendMessage(sessionId, TRACED_CHAT.first)).messageId);
      assert.equal(outcome.reason, 'completed');
      assert.equal('traceId' in outcome, false);
      const history = await untraced.client.exportHistory(sessionId);
      assert.equal(JSON.stringify(history).includes('_tracer-data'), false, 'no event of the history carries a trace header');
      // A worker that traces takes the session over as it is.
      await replaySessionHistory(history, { allowParallelInProgress: true }, sessionId, { tracing: tracing.worker });
    } finally {
      await untraced.close();
    }
  });
});
