import type { ChatCompletion } from 'openai/resources/chat/completions';
import { parseChatRequest, type ChatMessage, type ChatRequest } from './chat-request';
import { errorTypeFor, openAIError, type OpenAIErrorBody } from './openai-error';
import type { ContentCheck, ModelScript, ScriptConversation, ScriptStep } from './script';

/** A request placed in the script: its conversation, its step, and the request itself. */
export interface RoutedRequest {
  ok: true;
  conversation: ScriptConversation;
  step: ScriptStep;
  request: ChatRequest;
}

/** A request the script cannot answer, with the HTTP error that says why. */
export interface RefusedRequest {
  ok: false;
  /** The conversation and step, when the request got that far. */
  conversation: string | null;
  step: number | null;
  status: number;
  body: OpenAIErrorBody;
}

/** What to send back, after how long. */
export interface ScriptedAnswer {
  conversation: string | null;
  step: number | null;
  status: number;
  body: ChatCompletion | OpenAIErrorBody;
  headers: Record<string, string>;
  delayMs: number;
}

const QUOTED = 200;

/**
 * Places a request in the script, from the request alone (so a retried request lands on the same
 * step): the first conversation whose `match.firstUserMessage` matches the text of the first user
 * message, and in it the step numbered by the assistant messages already in `messages`. Then
 * checks the step's `expect`.
 *
 * Refuses with 400 a malformed request, `stream: true` when `refuseStreaming` (a model that does
 * not stream), a request no conversation matches, a step past the end of its conversation, and a
 * failed expectation, each with a message naming the script, the conversation, the step, what was
 * expected and what came.
 */
export function routeRequest(script: ModelScript, body: unknown, options: { refuseStreaming?: boolean } = {}): RoutedRequest | RefusedRequest {
  const refuse = (message: string, code: string, conversation: string | null = null, step: number | null = null): RefusedRequest => ({
    ok: false,
    conversation,
    step,
    status: 400,
    body: openAIError(400, `scripted model (${script.source}): ${message}`, code),
  });
  const parsed = parseChatRequest(body);
  if (!parsed.ok) return refuse(parsed.message, 'invalid_request');
  const request = parsed.request;
  if (request.stream && options.refuseStreaming === true) {
    return refuse('this scripted model does not stream (it was started refusing to): send the request without "stream": true', 'stream_unsupported');
  }

  const firstUser = request.messages.find((m) => m.role === 'user');
  const conversation = firstUser === undefined ? undefined : script.conversations.find((c) => c.match.firstUserMessage.test(firstUser.text));
  if (conversation === undefined) {
    const matchers = script.conversations.map((c) => `"${c.name}" (${String(c.match.firstUserMessage)})`).join(', ');
    const got = firstUser === undefined ? 'the request has no user message' : `its first user message is ${quote(firstUser.text)}`;
    return refuse(`no conversation matches this request: ${got}; the conversations match the first user message with ${matchers}`, 'scripted_no_conversation');
  }
  const index = request.messages.filter((m) => m.role === 'assistant').length;
  const step = conversation.steps[index];
  if (step === undefined) {
    return refuse(
      `conversation "${conversation.name}" has ${conversation.steps.length} step(s) (0 to ${conversation.steps.length - 1}), ` +
        `but the request already holds ${index} assistant message(s), so it asks for step ${index}: the script has ended`,
      'scripted_script_ended',
      conversation.name,
      index,
    );
  }
  const failed = unmetExpectation(step, request);
  if (failed !== undefined) {
    return refuse(`conversation "${conversation.name}", step ${index} expected ${failed}`, 'scripted_expectation_failed', conversation.name, index);
  }
  return { ok: true, conversation, step, request };
}

/**
 * The answer of a routed request. `attempt` is how many requests this step has received,
 * this one included (counted by the server): a step's `error` is the answer while it is at most
 * `times`, its `content` and `tool_calls` after that.
 *
 * Tool call ids are `call_<conversation>_<step>_<index>`, the same on every attempt, so a person
 * can approve a call by its id and a retried request produces the same ids.
 *
 * @param created the `created` second of the answer (the server passes its start time, so
 *   repeated answers are byte-identical).
 */
export function answerStep(routed: RoutedRequest, options: { attempt: number; created: number }): ScriptedAnswer {
  const { conversation, step, request } = routed;
  const { respond } = step;
  const delayMs = respond.delayMs ?? 0;
  const placed = { conversation: conversation.name, step: step.index, delayMs };
  const error = respond.error;
  if (error !== undefined && (error.times === undefined || options.attempt <= error.times)) {
    return {
      ...placed,
      status: error.status,
      body: openAIError(error.status, error.message, error.code ?? null, error.type ?? errorTypeFor(error.status)),
      headers: error.retryAfterMs !== undefined ? { 'retry-after-ms': String(error.retryAfterMs) } : {},
    };
  }
  const toolCalls = (respond.tool_calls ?? []).map((call, index) => ({
    id: `call_${conversation.name}_${step.index}_${index}`,
    type: 'function' as const,
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  const content = respond.content ?? null;
  const completionChars = (content ?? '').length + toolCalls.reduce((n, c) => n + c.function.name.length + c.function.arguments.length, 0);
  const promptTokens = Math.ceil(request.promptChars / 4);
  const completionTokens = Math.ceil(completionChars / 4);
  const completion: ChatCompletion = {
    id: `chatcmpl-scripted-${conversation.name}-${step.index}`,
    object: 'chat.completion',
    created: options.created,
    model: request.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        logprobs: null,
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
  return { ...placed, status: 200, body: completion, headers: {} };
}

/** What the step expected and did not get, as the end of a sentence; undefined when all is met. */
function unmetExpectation(step: ScriptStep, request: ChatRequest): string | undefined {
  const expect = step.expect;
  if (expect === undefined) return undefined;
  if (expect.toolsInclude !== undefined) {
    const missing = expect.toolsInclude.filter((name) => !request.toolNames.includes(name));
    if (missing.length > 0) {
      const offered = request.toolNames.length === 0 ? 'offers no tools' : `offers ${request.toolNames.join(', ')}`;
      return `the offered tools to include ${expect.toolsInclude.join(', ')}; the request ${offered}`;
    }
  }
  const last = expect.lastMessage;
  if (last !== undefined) {
    const message = request.messages[request.messages.length - 1] as ChatMessage;
    const wanted = `the last message to be ${last.role !== undefined ? `a "${last.role}" message` : 'a message'}${describeCheck(last)}`;
    if ((last.role !== undefined && message.role !== last.role) || !meets(last, message.text)) {
      return `${wanted}; it is a "${message.role}" message: ${quote(message.text)}`;
    }
  }
  if (expect.toolResults !== undefined) {
    const at = request.messages.map((m) => m.role).lastIndexOf('assistant');
    const calls = at < 0 ? [] : (request.messages[at] as ChatMessage).toolCallIds;
    if (calls.length !== expect.toolResults.length) {
      return `the results of ${expect.toolResults.length} tool call(s); the last assistant message of the request made ${calls.length}`;
    }
    const after = request.messages.slice(at + 1);
    for (const [i, check] of expect.toolResults.entries()) {
      const id = calls[i] as string;
      const result = after.find((m) => m.role === 'tool' && m.toolCallId === id);
      if (result === undefined) return `a tool message answering call ${id} (tool call ${i}); the request has none`;
      if (!meets(check, result.text)) return `the result of tool call ${i} (${id})${describeCheck(check)}; it is ${quote(result.text)}`;
    }
  }
  return undefined;
}

function meets(check: ContentCheck, text: string): boolean {
  return (check.contentMatches?.test(text) ?? true) && !(check.contentDoesNotMatch?.test(text) ?? false);
}

function describeCheck(check: ContentCheck): string {
  const parts = [
    ...(check.contentMatches !== undefined ? [`matches ${String(check.contentMatches)}`] : []),
    ...(check.contentDoesNotMatch !== undefined ? [`does not match ${String(check.contentDoesNotMatch)}`] : []),
  ];
  return parts.length === 0 ? '' : ` whose content ${parts.join(' and ')}`;
}

function quote(text: string): string {
  return JSON.stringify(text.length > QUOTED ? `${text.slice(0, QUOTED - 1)}…` : text);
}
