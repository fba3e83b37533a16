import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { TODO_WRITE_TOOL_NAME } from '../src/todo';
import type { ToolCall, Usage } from '../src/session';
import type { AgentActivities, ModelAnswer } from './agent-contract';
import type { AgentSpans } from './agent-spans';
import { withHeartbeat } from './heartbeat';

/** Where the model is, as the worker was configured (`OPENAI_BASE_URL`, `OPENAI_API_KEY`). */
export interface ModelEndpoint {
  /** An OpenAI-compatible endpoint; absent means OpenAI's own. */
  baseUrl?: string;
  /** The API key; a function so that it never sits in a serializable object. */
  apiKey(): string | undefined;
  /** How long one request may take before it is abandoned and retried (default 5 minutes). */
  requestTimeoutMs?: number;
}

/** OpenAI's own endpoint, used when `OPENAI_BASE_URL` is not set. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The failure type of a request the endpoint refused (a 4xx other than 408 and 429): retrying cannot help. */
export const MODEL_REQUEST_REJECTED = 'ModelRequestRejected';

/** The failure type of a worker whose model settings cannot work (no API key for OpenAI's endpoint). */
export const MODEL_NOT_CONFIGURED = 'ModelNotConfigured';

/** The failure type of an endpoint that could not answer now (429, 5xx, timeouts, connection errors): retried. */
export const MODEL_UNAVAILABLE = 'ModelUnavailable';

/** Sent as the key to an endpoint of one's own that was given none: the openai client insists on one. */
const PLACEHOLDER_KEY = 'agent-sessions-no-key';

const DEFAULT_REQUEST_TIMEOUT_MS = 5 * 60_000;

/** The longest wait a `retry-after` header may ask for before the next attempt. */
const MAX_RETRY_AFTER_MS = 60_000;

type CallModelInput = Parameters<AgentActivities['callModel']>[0];

/**
 * Makes the `callModel` activity for an endpoint: one chat completion with the official
 * `openai` client, non-streaming. The client's own retries are off: Temporal retries the
 * activity, visibly in history, with the workflow's backoff.
 *
 * While the request is in flight the activity heartbeats every second, so a worker that dies is
 * noticed within the heartbeat timeout, and a cancellation (an interrupt, a closed session)
 * reaches it and aborts the request rather than leaving it running.
 *
 * Failures: a 429, a 408, a 5xx, a timeout or a connection error is a retryable
 * `ModelUnavailable` (honouring `retry-after`); any other 4xx is a non-retryable
 * `ModelRequestRejected` carrying the status and the server's message; no API key for OpenAI's
 * own endpoint is a non-retryable `ModelNotConfigured` naming `OPENAI_API_KEY`. The key is never
 * part of any message: it is cut out of whatever the server says.
 */
export function modelCaller(endpoint: ModelEndpoint, spans?: AgentSpans): (input: CallModelInput) => Promise<ModelAnswer> {
  const call = untracedModelCaller(endpoint);
  if (spans === undefined) return call;
  const baseUrl = endpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  // Each attempt of the activity is one `chat` span: a retried call shows every attempt.
  return (input) => spans.modelCall({ ...input, baseUrl }, () => call(input));
}

function untracedModelCaller(endpoint: ModelEndpoint): (input: CallModelInput) => Promise<ModelAnswer> {
  const baseURL = endpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  let client: OpenAI | undefined;
  let clientKey: string | undefined;
  return async (input) => {
    const key = endpoint.apiKey();
    if (key === undefined && endpoint.baseUrl === undefined) {
      throw ApplicationFailure.nonRetryable(
        `OPENAI_API_KEY is not set on the worker, and the model endpoint is OpenAI's own (${baseURL}): set OPENAI_API_KEY, or point OPENAI_BASE_URL at an OpenAI-compatible server`,
        MODEL_NOT_CONFIGURED,
      );
    }
    const apiKey = key ?? PLACEHOLDER_KEY;
    if (client === undefined || clientKey !== apiKey) {
      client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: endpoint.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, logLevel: 'warn' });
      clientKey = apiKey;
    }
    const openai = client;
    const signal = Context.current().cancellationSignal;
    let completion: ChatCompletion;
    try {
      completion = await withHeartbeat(() =>
        openai.chat.completions.create(
          {
            model: input.model,
            messages: input.messages as ChatCompletionMessageParam[],
            ...(input.tools.length > 0 ? { tools: input.tools as ChatCompletionTool[], tool_choice: 'auto' as const } : {}),
          },
          { signal },
        ),
      );
    } catch (error) {
      if (signal.aborted) {
        const reason: unknown = signal.reason;
        throw reason instanceof CancelledFailure ? reason : new CancelledFailure('the model call was cancelled');
      }
      throw modelFailure(error, baseURL, key);
    }
    return answerOf(completion, baseURL, key);
  };
}

/** The largest model answer (text and tool calls, as JSON) a session records: half of Temporal's payload limit. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** The answer of a completion, with its usage and the characters the model wrote (exported for tests). */
export function answerOf(completion: ChatCompletion, baseURL: string, key: string | undefined): ModelAnswer {
  const choice = completion.choices?.[0];
  if (choice === undefined) {
    throw ApplicationFailure.retryable(redact(`the model endpoint ${baseURL} answered without any choice`, key), MODEL_UNAVAILABLE);
  }
  const toolCalls: ToolCall[] = [];
  const ids = new Set<string>();
  for (const call of choice.message.tool_calls ?? []) {
    // Only function tools are offered, so only function calls can be answered.
    if (call.type !== 'function') continue;
    // Each result is paired with its call by id: an empty or repeated id would pair two calls
    // with one result, so such a call gets an id of its own (the answer's index), said in it.
    const id = call.id && !ids.has(call.id) ? call.id : `call_${toolCalls.length}_of_${completion.id ?? 'answer'}`;
    ids.add(id);
    toolCalls.push({ id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments ?? '' } });
  }
  const content = choice.message.content ?? null;
  const answerBytes = Buffer.byteLength(JSON.stringify({ content, toolCalls }));
  if (answerBytes > MAX_ANSWER_BYTES) {
    // It must fit in history as the activity's result (Temporal refuses payloads over 2 MB).
    throw ApplicationFailure.nonRetryable(
      `the model's answer is ${answerBytes} bytes, more than the ${MAX_ANSWER_BYTES} a session keeps; ask for a shorter answer`,
      'ModelAnswerTooLarge',
    );
  }
  const argumentChars = (calls: ToolCall[]): number => calls.reduce((sum, call) => sum + call.function.arguments.length, 0);
  const usage: Usage = {
    prompt_tokens: completion.usage?.prompt_tokens ?? 0,
    completion_tokens: completion.usage?.completion_tokens ?? 0,
    total_tokens: completion.usage?.total_tokens ?? 0,
    model_calls: 1,
    output_chars: (content ?? '').length + argumentChars(toolCalls),
    todo_write_chars: argumentChars(toolCalls.filter((call) => call.function.name === TODO_WRITE_TOOL_NAME)),
  };
  return { content, toolCalls, usage, finishReason: choice.finish_reason ?? null, ...(typeof completion.model === 'string' && completion.model !== '' ? { model: completion.model } : {}) };
}

/** The failure a failed request is reported as: retryable or not, never carrying the key. */
function modelFailure(error: unknown, baseURL: string, key: string | undefined): ApplicationFailure {
  const say = (text: string): string => redact(text, key);
  if (error instanceof APIConnectionTimeoutError) {
    return ApplicationFailure.retryable(say(`the model endpoint ${baseURL} did not answer in time`), MODEL_UNAVAILABLE);
  }
  if (error instanceof APIConnectionError || error instanceof APIUserAbortError) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    return ApplicationFailure.retryable(say(`the model endpoint ${baseURL} could not be reached${detail}`), MODEL_UNAVAILABLE);
  }
  if (error instanceof APIError && typeof error.status === 'number') {
    const status = error.status;
    const message = serverMessage(error);
    if (status === 408 || status === 429 || status >= 500) {
      const delay = retryAfterMs(error.headers);
      return ApplicationFailure.create({
        message: say(`the model endpoint ${baseURL} answered HTTP ${status} (retried): ${message}`),
        type: MODEL_UNAVAILABLE,
        ...(delay !== undefined ? { nextRetryDelay: delay } : {}),
      });
    }
    return ApplicationFailure.nonRetryable(say(`the model endpoint ${baseURL} refused the request with HTTP ${status}: ${message}`), MODEL_REQUEST_REJECTED);
  }
  // Anything else (a response the client could not read, a bug) may pass: retry it.
  return ApplicationFailure.retryable(say(`the model call to ${baseURL} failed: ${error instanceof Error ? error.message : String(error)}`), MODEL_UNAVAILABLE);
}

/** What the server said, without the client's own "400 " prefix. */
function serverMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  if (typeof body?.message === 'string' && body.message !== '') return body.message;
  return error.message.replace(/^\d{3}\s+/, '');
}

/** The wait a 429 or 503 asks for (`retry-after-ms`, else `retry-after` in seconds), bounded. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  const seconds = Number(headers?.get('retry-after') ?? Number.NaN);
  const wait = Number.isFinite(ms) ? ms : Number.isFinite(seconds) ? seconds * 1000 : undefined;
  return wait === undefined || wait < 0 ? undefined : Math.min(wait, MAX_RETRY_AFTER_MS);
}

/** `text` without the key in it (a server may quote what it was sent). */
function redact(text: string, key: string | undefined): string {
  return key === undefined || key === '' ? text : text.split(key).join('[hidden]');
}
