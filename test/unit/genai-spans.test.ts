import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ModelAnswer } from '../../activities/agent-contract';
import { NO_USAGE } from '../../src/session';
import { genAiSpans, providerOf } from '../../src/tracing/agent-spans';
import { traceIdOf, traceparentOf } from '../../workflows/turn-trace';
import { defaultPayloadConverter } from '@temporalio/common';

function spansOf(captureContent: boolean) {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
  return { spans: genAiSpans(tracer, captureContent), exporter };
}

const request = {
  sessionId: 'build-42',
  model: 'gpt-4o-mini',
  baseUrl: 'https://api.openai.com/v1',
  messages: [
    { role: 'system' as const, content: 'You are an agent.' },
    { role: 'user' as const, content: 'Fix the lint errors' },
  ],
  tools: [],
};
const answer: ModelAnswer = {
  content: null,
  toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'todo_write', arguments: '{"todos":[]}' } }],
  usage: { ...NO_USAGE, prompt_tokens: 120, completion_tokens: 14, total_tokens: 134, model_calls: 1 },
  finishReason: 'tool_calls',
  model: 'gpt-4o-mini-2024-07-18',
};

describe('GenAI spans', () => {
  test('a model call is `chat {model}`, CLIENT, with the conventions’ attributes and no content by default', async () => {
    const { spans, exporter } = spansOf(false);
    assert.equal(await spans.modelCall(request, async () => answer), answer);
    const [span] = exporter.getFinishedSpans();
    assert.equal(span?.name, 'chat gpt-4o-mini');
    assert.equal(span?.kind, SpanKind.CLIENT);
    assert.deepEqual(span?.attributes, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.conversation.id': 'build-42',
      'server.address': 'api.openai.com',
      'server.port': 443,
      'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 14,
    });
  });

  test('with content capture on, the messages sent and the answer are attributes in the conventions’ format', async () => {
    const { spans, exporter } = spansOf(true);
    await spans.modelCall(request, async () => answer);
    const attributes = exporter.getFinishedSpans()[0]!.attributes;
    assert.deepEqual(JSON.parse(String(attributes['gen_ai.system_instructions'])), [{ type: 'text', content: 'You are an agent.' }]);
    assert.deepEqual(JSON.parse(String(attributes['gen_ai.input.messages'])), [{ role: 'user', parts: [{ type: 'text', content: 'Fix the lint errors' }] }]);
    assert.deepEqual(JSON.parse(String(attributes['gen_ai.output.messages'])), [
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'todo_write', arguments: '{"todos":[]}' }], finish_reason: 'tool_calls' },
    ]);
  });

  test('a failed call is an error span whose error.type is the failure’s type, and the error is thrown on', async () => {
    const { spans, exporter } = spansOf(false);
    const failure = Object.assign(new Error('the model endpoint answered HTTP 503'), { type: 'ModelUnavailable' });
    await assert.rejects(spans.modelCall(request, async () => Promise.reject(failure)), failure);
    const span = exporter.getFinishedSpans()[0]!;
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes['error.type'], 'ModelUnavailable');
  });

  test('a tool call is `execute_tool {name}`; a refusal names its first rule and every rule; any other failed outcome is tool_error', async () => {
    const { spans, exporter } = spansOf(false);
    const call = { sessionId: 'build-42', callId: 'call_7', name: 'todo_write', arguments: '{}' };
    await spans.toolCall(call, async () => ({ ok: true, content: 'Updated todo list: 1 pending, 0 in progress, 0 completed' }));
    await spans.toolCall(call, async (span) => {
      span.refused('duplicate-content', ['duplicate-content', 'empty-content']);
      return { ok: false, content: 'todo_write rejected: …' };
    });
    await spans.toolCall({ ...call, name: 'read_file' }, async () => ({ ok: false, content: 'no such file' }));
    const [accepted, refused, failed] = exporter.getFinishedSpans();
    assert.equal(accepted!.name, 'execute_tool todo_write');
    assert.equal(accepted!.kind, SpanKind.INTERNAL);
    assert.equal(accepted!.attributes['gen_ai.tool.call.id'], 'call_7');
    assert.notEqual(accepted!.status.code, SpanStatusCode.ERROR);
    assert.equal(refused!.status.code, SpanStatusCode.ERROR);
    assert.equal(refused!.attributes['error.type'], 'duplicate-content');
    assert.deepEqual(refused!.attributes['agent_sessions.rejection.rules'], ['duplicate-content', 'empty-content']);
    assert.equal(failed!.attributes['error.type'], 'tool_error');
    assert.equal(failed!.attributes['gen_ai.tool.call.arguments'], undefined, 'arguments only with content capture');
  });

  test('the provider is named from the endpoint’s host; any other OpenAI-compatible endpoint is openai', () => {
    assert.equal(providerOf('https://api.deepseek.com/v1'), 'deepseek');
    assert.equal(providerOf('https://my-res.openai.azure.com/openai'), 'azure.ai.openai');
    assert.equal(providerOf('http://127.0.0.1:8000/v1'), 'openai');
  });
});

describe("a turn's trace context from a header", () => {
  const header = (carrier: unknown) => ({ '_tracer-data': defaultPayloadConverter.toPayload(carrier) });
  test('a valid traceparent gives its trace id; a missing, malformed or all-zero one gives none', () => {
    const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    assert.equal(traceparentOf(header({ traceparent: valid })), valid);
    assert.equal(traceIdOf(valid), '4bf92f3577b34da6a3ce929d0e0e4736');
    for (const bad of [{}, { traceparent: 'x' }, { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }, { traceparent: valid.toUpperCase() }, 'not an object']) {
      assert.equal(traceparentOf(header(bad)), undefined, JSON.stringify(bad));
    }
    assert.equal(traceparentOf({}), undefined);
  });
});
