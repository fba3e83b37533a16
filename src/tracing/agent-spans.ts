import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import type { ModelAnswer, ToolOutcome } from '../../activities/agent-contract';
import type { AgentSpans, ModelCallRequest, ToolCallRequest } from '../../activities/agent-spans';
import type { ChatMessage } from '../session/agent-state';

/** Longest text an error's status message keeps. */
const STATUS_CHARS = 500;

/**
 * The GenAI spans of the agent's activities, written by us after OpenTelemetry's semantic
 * conventions for generative AI (the OpenAI instrumentation does not support `openai` 7):
 * `chat {model}` (CLIENT) per model call and `execute_tool {name}` (INTERNAL) per tool call.
 * Contents (messages, answers, arguments, results) only when `captureContent`
 * (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`).
 */
export function genAiSpans(tracer: Tracer, captureContent: boolean): AgentSpans {
  return {
    modelCall(request: ModelCallRequest, call: () => Promise<ModelAnswer>): Promise<ModelAnswer> {
      const attributes: Attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': providerOf(request.baseUrl),
        'gen_ai.request.model': request.model,
        'gen_ai.conversation.id': request.sessionId,
        ...serverOf(request.baseUrl),
        ...(captureContent ? inputContent(request.messages) : {}),
      };
      return tracer.startActiveSpan(`chat ${request.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
        try {
          const answer = await call();
          span.setAttributes({
            'gen_ai.response.model': answer.model ?? request.model,
            'gen_ai.response.finish_reasons': [answer.finishReason ?? 'unknown'],
            'gen_ai.usage.input_tokens': answer.usage.prompt_tokens,
            'gen_ai.usage.output_tokens': answer.usage.completion_tokens,
            ...(captureContent ? { 'gen_ai.output.messages': JSON.stringify([outputMessage(answer)]) } : {}),
          });
          return answer;
        } catch (error) {
          failed(span, errorType(error), error);
          throw error;
        } finally {
          span.end();
        }
      });
    },

    toolCall<T extends ToolOutcome>(request: ToolCallRequest, run: (span: { refused(rule: string, rules: readonly string[]): void }) => Promise<T>): Promise<T> {
      const attributes: Attributes = {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': request.name,
        'gen_ai.tool.call.id': request.callId,
        'gen_ai.tool.type': 'function',
        'gen_ai.conversation.id': request.sessionId,
        ...(captureContent ? { 'gen_ai.tool.call.arguments': request.arguments } : {}),
      };
      return tracer.startActiveSpan(`execute_tool ${request.name}`, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
        let refusal: { rule: string; rules: readonly string[] } | undefined;
        try {
          const outcome = await run({ refused: (rule, rules) => void (refusal = { rule, rules }) });
          if (captureContent) span.setAttribute('gen_ai.tool.call.result', outcome.content);
          if (!outcome.ok) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.content.slice(0, STATUS_CHARS) });
            span.setAttribute('error.type', refusal?.rule ?? 'tool_error');
            // Every rule the refused call broke, so a trace search can find writes refused by any one of them.
            if (refusal !== undefined) span.setAttribute('agent_sessions.rejection.rules', [...refusal.rules]);
          }
          return outcome;
        } catch (error) {
          failed(span, errorType(error), error);
          throw error;
        } finally {
          span.end();
        }
      });
    },
  };
}

/** Known OpenAI-compatible providers by host; any other endpoint speaks OpenAI's API through the `openai` client. */
const PROVIDERS: ReadonlyArray<[RegExp, string]> = [
  [/(^|\.)openai\.azure\.com$/, 'azure.ai.openai'],
  [/(^|\.)deepseek\.com$/, 'deepseek'],
  [/(^|\.)mistral\.ai$/, 'mistral_ai'],
  [/(^|\.)groq\.com$/, 'groq'],
  [/(^|\.)x\.ai$/, 'x_ai'],
  [/(^|\.)perplexity\.ai$/, 'perplexity'],
  [/(^|\.)generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
];

/** `gen_ai.provider.name` of an endpoint. */
export function providerOf(baseUrl: string): string {
  const host = hostOf(baseUrl)?.hostname ?? '';
  return PROVIDERS.find(([pattern]) => pattern.test(host))?.[1] ?? 'openai';
}

function hostOf(baseUrl: string): URL | undefined {
  try {
    return new URL(baseUrl);
  } catch {
    return undefined;
  }
}

function serverOf(baseUrl: string): Attributes {
  const url = hostOf(baseUrl);
  if (url === undefined) return {};
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { 'server.address': url.hostname, 'server.port': port };
}

/** The type an error is known by: a Temporal failure's type, else its class. */
function errorType(error: unknown): string {
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type === 'string' && type !== '') return type;
  return error instanceof Error ? error.name : 'unknown';
}

function failed(span: Span, type: string, error: unknown): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (error instanceof Error ? error.message : String(error)).slice(0, STATUS_CHARS) });
  if (error instanceof Error) span.recordException(error);
}

/** The conversation sent, in the conventions' message format (`gen_ai.system_instructions`, `gen_ai.input.messages`). */
function inputContent(messages: readonly ChatMessage[]): Attributes {
  const system = messages.filter((message) => message.role === 'system').map((message) => ({ type: 'text', content: message.content }));
  const input = messages.filter((message) => message.role !== 'system').map(conventionMessage);
  return { ...(system.length > 0 ? { 'gen_ai.system_instructions': JSON.stringify(system) } : {}), 'gen_ai.input.messages': JSON.stringify(input) };
}

function conventionMessage(message: ChatMessage): { role: string; parts: unknown[] } {
  switch (message.role) {
    case 'assistant':
      return {
        role: 'assistant',
        parts: [
          ...(message.content !== null ? [{ type: 'text', content: message.content }] : []),
          ...(message.tool_calls ?? []).map((call) => ({ type: 'tool_call', id: call.id, name: call.function.name, arguments: call.function.arguments })),
        ],
      };
    case 'tool':
      return { role: 'tool', parts: [{ type: 'tool_call_response', id: message.tool_call_id, response: message.content }] };
    default:
      return { role: message.role, parts: [{ type: 'text', content: message.content }] };
  }
}

function outputMessage(answer: ModelAnswer): { role: string; parts: unknown[]; finish_reason: string } {
  return { ...conventionMessage({ role: 'assistant', content: answer.content, tool_calls: answer.toolCalls }), finish_reason: answer.finishReason ?? 'unknown' };
}
