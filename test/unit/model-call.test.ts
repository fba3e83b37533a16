import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import type { ModelAnswer, ToolDefinition } from '../../activities/agent-contract';
import { answerOf, MAX_ANSWER_BYTES, MODEL_NOT_CONFIGURED, MODEL_REQUEST_REJECTED, MODEL_UNAVAILABLE, modelCaller, type ModelWordSink } from '../../activities/model-call';
import { CompletionAssembler } from '../../activities/completion-assembler';
import { applyModelStreamEvent, type LiveAnswer, type ModelStreamEvent } from '../../src/session/model-stream';
import { startModelServer, type ModelServer, type ScriptJson } from '../../src/model-server';
import { todoWriteToolDefinition } from '../../src/todo';

const KEY = 'sk-test-do-not-print-0123456789';

const SCRIPT: ScriptJson = {
  conversations: [
    {
      name: 'plan',
      match: { firstUserMessage: '^Plan' },
      steps: [{ respond: { content: 'Planning.', tool_calls: [{ name: 'todo_write', arguments: { todos: [{ content: 'Run lint', status: 'pending' }] } }] } }],
    },
    { name: 'refused', match: { firstUserMessage: '^Refuse' }, steps: [{ respond: { error: { status: 400, message: 'This model does not support tools' } } }] },
    { name: 'leaky', match: { firstUserMessage: '^Leak' }, steps: [{ respond: { error: { status: 401, message: `Incorrect API key provided: ${KEY}` } } }] },
    { name: 'broken', match: { firstUserMessage: '^Break' }, steps: [{ respond: { error: { status: 503, message: 'The server is overloaded' } } }] },
    { name: 'limited', match: { firstUserMessage: '^Limit' }, steps: [{ respond: { error: { status: 429, message: 'Rate limit reached', retryAfterMs: 1500 } } }] },
    { name: 'slow', match: { firstUserMessage: '^Think' }, steps: [{ respond: { content: 'Done thinking.', delayMs: 2500 } }] },
    { name: 'stuck', match: { firstUserMessage: '^Wait' }, steps: [{ respond: { content: 'Never sent.', delayMs: 60_000 } }] },
  ],
};

const TOOLS: ToolDefinition[] = [todoWriteToolDefinition({ allowParallelInProgress: false })];

let server: ModelServer;

/** An activity environment that keeps the failures these tests provoke out of the output. */
function quietEnvironment(): MockActivityEnvironment {
  return new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
}

before(async () => {
  server = await startModelServer({ script: SCRIPT, apiKey: KEY });
});

after(async () => {
  await server.close();
});

function call(text: string, endpoint: Parameters<typeof modelCaller>[0], env = quietEnvironment()): Promise<ModelAnswer> {
  const callModel = modelCaller(endpoint);
  return env.run(callModel, { sessionId: 'model-call-test', model: 'scripted', messages: [{ role: 'user' as const, content: text }], tools: TOOLS });
}

/** A sink that keeps every event it is given, and whether it was closed. */
function recordingSink(): ModelWordSink & { events: ModelStreamEvent[]; closed: boolean } {
  const sink = {
    events: [] as ModelStreamEvent[],
    closed: false,
    publish: (event: ModelStreamEvent) => void sink.events.push(event),
    close: async () => void (sink.closed = true),
  };
  return sink;
}

/** What a reader of `events` would show, put together. */
function assembled(events: readonly ModelStreamEvent[]): LiveAnswer | null {
  return events.reduce<LiveAnswer | null>(applyModelStreamEvent, null);
}

async function failure(answer: Promise<unknown>): Promise<ApplicationFailure> {
  try {
    await answer;
  } catch (error) {
    assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the call to fail');
}

describe('callModel', () => {
  test('answers the model’s text and tool calls with the usage, and counts the characters of todo_write arguments', async () => {
    const answer = await call('Plan the work', { baseUrl: server.url, apiKey: () => KEY });
    assert.equal(answer.content, 'Planning.');
    assert.equal(answer.finishReason, 'tool_calls');
    assert.equal(answer.toolCalls.length, 1);
    const [written] = answer.toolCalls;
    assert.deepEqual(written, {
      id: 'call_plan_0_0',
      type: 'function',
      function: { name: 'todo_write', arguments: JSON.stringify({ todos: [{ content: 'Run lint', status: 'pending' }] }) },
    });
    assert.equal(answer.usage.model_calls, 1);
    assert.ok(answer.usage.prompt_tokens > 0 && answer.usage.completion_tokens > 0);
    assert.equal(answer.usage.total_tokens, answer.usage.prompt_tokens + answer.usage.completion_tokens);
    assert.equal(answer.usage.todo_write_chars, written!.function.arguments.length);
    assert.equal(answer.usage.output_chars, 'Planning.'.length + written!.function.arguments.length);
  });

  test('a 4xx other than 408 and 429 is not retried, and its failure carries the status and the server’s message', async () => {
    const failed = await failure(call('Refuse this', { baseUrl: server.url, apiKey: () => KEY }));
    assert.equal(failed.type, MODEL_REQUEST_REJECTED);
    assert.equal(failed.nonRetryable, true);
    assert.match(failed.message, /HTTP 400: .*This model does not support tools/);
  });

  test('a 5xx is retried by Temporal: the failure is retryable and names the status', async () => {
    const failed = await failure(call('Break it', { baseUrl: server.url, apiKey: () => KEY }));
    assert.equal(failed.type, MODEL_UNAVAILABLE);
    assert.equal(failed.nonRetryable, false);
    assert.match(failed.message, /HTTP 503 \(retried\): .*overloaded/);
  });

  test('a 429 is retried after the wait the server asked for', async () => {
    const failed = await failure(call('Limit me', { baseUrl: server.url, apiKey: () => KEY }));
    assert.equal(failed.type, MODEL_UNAVAILABLE);
    assert.equal(failed.nonRetryable, false);
    assert.equal(failed.nextRetryDelay, 1500);
  });

  test('an endpoint that cannot be reached is retried', async () => {
    const failed = await failure(call('Plan the work', { baseUrl: 'http://127.0.0.1:9/v1', apiKey: () => KEY }));
    assert.equal(failed.type, MODEL_UNAVAILABLE);
    assert.equal(failed.nonRetryable, false);
    assert.match(failed.message, /could not be reached/);
  });

  test('a request that takes longer than the timeout is abandoned and retried', async () => {
    const failed = await failure(call('Wait forever', { baseUrl: server.url, apiKey: () => KEY, requestTimeoutMs: 300 }));
    assert.equal(failed.type, MODEL_UNAVAILABLE);
    assert.match(failed.message, /did not answer in time/);
  });

  test('without a key, OpenAI’s own endpoint fails at once naming OPENAI_API_KEY; an endpoint of one’s own gets a placeholder key', async () => {
    const failed = await failure(call('Plan the work', { apiKey: () => undefined }));
    assert.equal(failed.type, MODEL_NOT_CONFIGURED);
    assert.equal(failed.nonRetryable, true);
    assert.match(failed.message, /OPENAI_API_KEY is not set/);
    // The scripted server here demands KEY, so the placeholder is refused: it was sent, not nothing.
    const placeholder = await failure(call('Plan the work', { baseUrl: server.url, apiKey: () => undefined }));
    assert.match(placeholder.message, /HTTP 401/);
  });

  test('the key never appears in a failure, even when the server quotes it', async () => {
    const failed = await failure(call('Leak the key', { baseUrl: server.url, apiKey: () => KEY }));
    assert.equal(failed.type, MODEL_REQUEST_REJECTED);
    assert.match(failed.message, /Incorrect API key provided: \[hidden\]/);
    assert.ok(!failed.message.includes(KEY));
    assert.ok(!(failed.stack ?? '').includes(KEY));
  });

  test('heartbeats every second while the request is in flight', async () => {
    const env = quietEnvironment();
    let beats = 0;
    env.on('heartbeat', () => beats++);
    const answer = await call('Think hard', { baseUrl: server.url, apiKey: () => KEY }, env);
    assert.equal(answer.content, 'Done thinking.');
    assert.ok(beats >= 3, `${beats} heartbeats in 2.5 s`);
  });

  test('a cancellation aborts the request in flight: the server sees it abandoned, not completed', async () => {
    server.reset();
    const env = quietEnvironment();
    const answer = call('Wait for me', { baseUrl: server.url, apiKey: () => KEY }, env);
    await server.waitForRequest((r) => r.conversation === 'stuck' && r.inFlight);
    env.cancel();
    await assert.rejects(answer, (error: unknown) => error instanceof CancelledFailure);
    const record = await server.waitForRequest((r) => r.conversation === 'stuck' && !r.inFlight);
    assert.equal(record.completed, false);
  });
});

describe('callModel, streamed', () => {
  const input = (text: string) => ({ sessionId: 'model-call-test', model: 'scripted', messages: [{ role: 'user' as const, content: text }], tools: TOOLS });
  const ask = (callModel: ReturnType<typeof modelCaller>, text: string, env = quietEnvironment()): Promise<ModelAnswer> => env.run(callModel, input(text)) as Promise<ModelAnswer>;

  test('the words go out as they come (start, the text, a tool call’s name and id, its arguments, end), and the answer and usage are those of the same request not streamed', async () => {
    server.reset();
    const sink = recordingSink();
    const streamed = await ask(modelCaller({ baseUrl: server.url, apiKey: () => KEY }, { words: () => sink }), 'Plan the work');
    const plain = await ask(modelCaller({ baseUrl: server.url, apiKey: () => KEY, stream: false }, { words: () => sink }), 'Plan the work');
    assert.deepEqual(streamed, plain);
    assert.deepEqual(server.requests().map((r) => [r.stream, r.streamed]), [[true, true], [false, false]]);
    const types = sink.events.map((event) => event.type);
    assert.equal(types[0], 'start');
    assert.equal(types.at(-1), 'end');
    assert.ok(types.filter((type) => type === 'text').length > 1, 'the text came in several pieces');
    assert.ok(types.indexOf('tool') < types.indexOf('arguments'), 'the tool call’s name before its arguments');
    const live = assembled(sink.events);
    assert.equal(live?.outcome, 'completed');
    assert.equal(live?.text, streamed.content);
    assert.deepEqual(live?.toolCalls.map((c) => [c.id, c.name, c.arguments]), streamed.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments]));
    assert.equal(sink.closed, true);
    assert.equal(sink.events.filter((event) => event.type === 'start').length, 1, 'a worker told not to stream publishes nothing');
  });

  test('a retried attempt says reset before its words, so readers drop what the attempt before wrote', async () => {
    const sink = recordingSink();
    await new MockActivityEnvironment({ attempt: 2 }, { logger: new DefaultLogger('ERROR') }).run(modelCaller({ baseUrl: server.url, apiKey: () => KEY }, { words: () => sink }), input('Plan the work'));
    assert.deepEqual(sink.events[0], { type: 'reset', call: sink.events[0]!.call, attempt: 2 });
    assert.equal(assembled([{ type: 'start', call: sink.events[0]!.call, attempt: 1 }, { type: 'text', call: sink.events[0]!.call, attempt: 1, text: 'half an ans' }, ...sink.events])?.text, 'Planning.');
  });

  test('an endpoint that refuses to stream is asked once more without streaming, and this caller never asks it streamed again', async () => {
    const refusing = await startModelServer({ script: SCRIPT, apiKey: KEY, streaming: { mode: 'refuse' } });
    try {
      const sink = recordingSink();
      const callModel = modelCaller({ baseUrl: refusing.url, apiKey: () => KEY }, { words: () => sink });
      const first = await ask(callModel, 'Plan the work');
      const second = await ask(callModel, 'Plan the work');
      assert.deepEqual(first, second);
      assert.equal(first.content, 'Planning.');
      assert.deepEqual(refusing.requests().map((r) => [r.stream, r.status]), [[true, 400], [false, 200], [false, 200]]);
      assert.equal(assembled(sink.events)?.text, 'Planning.', 'the answer still reaches readers, in one piece');
    } finally {
      await refusing.close();
    }
  });

  test('an endpoint that answers a streamed request with plain JSON is taken at its word (no second request), and asked without streaming after', async () => {
    const ignoring = await startModelServer({ script: SCRIPT, apiKey: KEY, streaming: { mode: 'json' } });
    try {
      const callModel = modelCaller({ baseUrl: ignoring.url, apiKey: () => KEY });
      const first = await ask(callModel, 'Plan the work');
      await ask(callModel, 'Plan the work');
      assert.equal(first.content, 'Planning.');
      assert.deepEqual(ignoring.requests().map((r) => [r.stream, r.streamed]), [[true, false], [false, false]]);
    } finally {
      await ignoring.close();
    }
  });

  test('a stream that goes quiet for longer than the timeout is abandoned and retried', async () => {
    const slow = await startModelServer({ script: SCRIPT, apiKey: KEY, streaming: { tokensPerSecond: 2 } });
    try {
      const sink = recordingSink();
      const failed = await failure(quietEnvironment().run(modelCaller({ baseUrl: slow.url, apiKey: () => KEY, requestTimeoutMs: 200 }, { words: () => sink }), input('Plan the work')));
      assert.equal(failed.type, MODEL_UNAVAILABLE);
      assert.equal(failed.nonRetryable, false);
      assert.match(failed.message, /did not answer in time/);
      assert.deepEqual(sink.events.at(-1), { type: 'end', call: sink.events[0]!.call, attempt: 1, outcome: 'failed' });
    } finally {
      await slow.close();
    }
  });

  test('a cancelled call says so to readers; words that cannot be delivered never fail a call', async () => {
    const sink = recordingSink();
    const env = quietEnvironment();
    const answer = env.run(modelCaller({ baseUrl: server.url, apiKey: () => KEY }, { words: () => sink }), input('Wait for me'));
    await server.waitForRequest((r) => r.conversation === 'stuck' && r.inFlight);
    env.cancel();
    await assert.rejects(answer, (error: unknown) => error instanceof CancelledFailure);
    assert.equal(assembled(sink.events)?.outcome, 'cancelled');

    const broken: ModelWordSink = { publish: () => undefined, close: () => Promise.reject(new Error('the stream is unreachable')) };
    const delivered = await ask(modelCaller({ baseUrl: server.url, apiKey: () => KEY }, { words: () => broken }), 'Plan the work');
    assert.equal(delivered.content, 'Planning.');
  });
});

describe('putting a streamed completion together', () => {
  test('arguments that come before their call’s name wait for it; the name is told once, the answer holds every piece', () => {
    const chunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] }) as never;
    const assembler = new CompletionAssembler();
    const told = [
      ...assembler.add(chunk({ tool_calls: [{ index: 1, function: { arguments: '{"a"' } }] })),
      ...assembler.add(chunk({ tool_calls: [{ index: 1, id: 'call_b', function: { name: 'read_file' } }] })),
      ...assembler.add(chunk({ tool_calls: [{ index: 1, function: { arguments: ':1}' } }] })),
      ...assembler.add(chunk({ tool_calls: [{ index: 0, id: 'call_a', function: { name: 'todo_write', arguments: '{}' } }] })),
      ...assembler.add(chunk({}, 'tool_calls')),
    ];
    assert.deepEqual(told, [
      { type: 'tool', index: 1, name: 'read_file', id: 'call_b' },
      { type: 'arguments', index: 1, text: '{"a"' },
      { type: 'arguments', index: 1, text: ':1}' },
      { type: 'tool', index: 0, name: 'todo_write', id: 'call_a' },
      { type: 'arguments', index: 0, text: '{}' },
    ]);
    const message = assembler.completion().choices[0]!.message;
    assert.equal(message.content, null, 'no text: null, as a plain answer says');
    assert.deepEqual(message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.name, c.function.arguments] : [])), [['call_a', 'todo_write', '{}'], ['call_b', 'read_file', '{"a":1}']]);
    assert.equal(assembler.finished, true);
  });
});

describe('what a completion becomes', () => {
  const completion = (calls: Array<{ id: string; name: string; arguments: string }>, content: string | null = null) =>
    ({
      id: 'chatcmpl-1',
      choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) } }],
    }) as never;

  test('empty or repeated call ids get ids of their own, so every result pairs with exactly one call', () => {
    const answer = answerOf(completion([{ id: 'call_0', name: 'todo_write', arguments: '{}' }, { id: 'call_0', name: 'read_file', arguments: '{}' }, { id: '', name: 'list_files', arguments: '{}' }]), 'http://x', undefined);
    const ids = answer.toolCalls.map((call) => call.id);
    assert.equal(ids[0], 'call_0');
    assert.equal(new Set(ids).size, 3, ids.join(', '));
  });

  test("an answer too large to keep in history fails for good, saying so", () => {
    assert.throws(
      () => answerOf(completion([], 'x'.repeat(MAX_ANSWER_BYTES + 1)), 'http://x', undefined),
      (error: unknown) => error instanceof ApplicationFailure && error.type === 'ModelAnswerTooLarge' && error.nonRetryable === true,
    );
  });
});
