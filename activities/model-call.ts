import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { TODO_WRITE_TOOL_NAME } from '../src/todo';
import type { ToolCall, Usage } from '../src/session';
import type { ModelCallOutcome, ModelStreamEvent } from '../src/session/model-stream';
import type { AgentActivities, ModelAnswer } from './agent-contract';
import type { AgentSpans } from './agent-spans';
import { CompletionAssembler, deltasOf, type AnswerDelta } from './completion-assembler';
import { withHeartbeat } from './heartbeat';

/** Where the model is, as the worker was configured (`OPENAI_BASE_URL`, `OPENAI_API_KEY`). */
export interface ModelEndpoint {
  /** An OpenAI-compatible endpoint; absent means OpenAI's own. */
  baseUrl?: string;
  /** The API key; a function so that it never sits in a serializable object. */
  apiKey(): string | undefined;
  /**
   * How long one request may take before it is abandoned and retried (default 5 minutes); for a
   * streamed answer, how long it may go without a chunk.
   */
  requestTimeoutMs?: number;
  /** Ask for a streamed answer (default true); false asks every call without streaming and publishes nothing. */
  stream?: boolean;
}

/**
 * Where a model call's words go while it runs (the session's stream, see
 * `activities/stream-publisher.ts`). Publishing never fails the call: a sink that cannot deliver
 * says so when it is closed, and the call goes on without it.
 */
export interface ModelWordSink {
  /** Queues an event; `now` sends what is queued at once instead of with the next batch. */
  publish(event: ModelStreamEvent, now?: boolean): void;
  /** Sends what is queued; resolves once it is delivered, or rejects saying why it could not be. */
  close(): Promise<void>;
}

/** Options of {@link modelCaller}. */
export interface ModelCallerOptions {
  /** The sink of one model call's words (called once per attempt, inside the activity); none: the words go nowhere. */
  words?: (input: CallModelInput) => ModelWordSink | undefined;
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

/** How long the words of a finished call may take to reach the stream before the call returns without waiting for them. */
const WORDS_CLOSE_MS = 5000;

/**
 * Makes the `callModel` activity for an endpoint: one chat completion with the official
 * `openai` client. The client's own retries are off: Temporal retries the activity, visibly in
 * history, with the workflow's backoff.
 *
 * The answer is asked for streamed (`stream: true`, with `stream_options.include_usage`), and its
 * words go to `options.words` as they come (the first attempt says `start`, a retried one
 * `reset`, then text and tool calls as they grow, then `end`); the call returns the assembled
 * message, exactly the answer (and usage) the same request gets without streaming, so the
 * session's history is the same either way. An endpoint that refuses to stream (a 4xx naming
 * `stream`) is asked once more without streaming; one that answers without Server-Sent Events is
 * taken at its word; either way this caller asks that endpoint without streaming from then on.
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
export function modelCaller(endpoint: ModelEndpoint, options: ModelCallerOptions = {}, spans?: AgentSpans): (input: CallModelInput) => Promise<ModelAnswer> {
  const call = untracedModelCaller(endpoint, options);
  if (spans === undefined) return call;
  const baseUrl = endpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  // Each attempt of the activity is one `chat` span: a retried call shows every attempt.
  return (input) => spans.modelCall({ ...input, baseUrl }, () => call(input));
}

function untracedModelCaller(endpoint: ModelEndpoint, options: ModelCallerOptions): (input: CallModelInput) => Promise<ModelAnswer> {
  const baseURL = endpoint.baseUrl ?? OPENAI_DEFAULT_BASE_URL;
  const timeoutMs = endpoint.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  let client: OpenAI | undefined;
  let clientKey: string | undefined;
  // Remembered for this endpoint once it refused (or ignored) a streamed request.
  let streams = endpoint.stream !== false;
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
      client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: timeoutMs, logLevel: 'warn' });
      clientKey = apiKey;
    }
    const openai = client;
    const context = Context.current();
    const signal = context.cancellationSignal;
    const request: ChatCompletionCreateParamsNonStreaming = {
      model: input.model,
      messages: input.messages as ChatCompletionMessageParam[],
      ...(input.tools.length > 0 ? { tools: input.tools as ChatCompletionTool[], tool_choice: 'auto' as const } : {}),
    };
    const words = endpoint.stream === false ? undefined : callWords(options.words?.(input), context.info);
    let completion: ChatCompletion;
    try {
      completion = await withHeartbeat(async () => {
        if (streams) {
          const streamed = await streamedCompletion(openai, request, signal, timeoutMs, words);
          if (streamed.kind === 'completion') return streamed.completion;
          streams = false;
          context.log.warn(redact(`the model endpoint ${baseURL} does not stream (${streamed.why}); this worker asks it without streaming from now on`, key));
          if (streamed.kind === 'answered') {
            words?.add(deltasOf(streamed.completion));
            return streamed.completion;
          }
        }
        const plain = await openai.chat.completions.create(request, { signal });
        words?.add(deltasOf(plain));
        return plain;
      });
    } catch (error) {
      if (signal.aborted) {
        await words?.end('cancelled');
        const reason: unknown = signal.reason;
        throw reason instanceof CancelledFailure ? reason : new CancelledFailure('the model call was cancelled');
      }
      await words?.end('failed');
      throw modelFailure(error, baseURL, key);
    }
    let answer: ModelAnswer;
    try {
      answer = answerOf(completion, baseURL, key);
    } catch (error) {
      // An answer the session cannot keep (too large, no choice) is no answer to readers either.
      await words?.end('failed');
      throw error;
    }
    await words?.end('completed', completion.choices?.[0]?.finish_reason ?? null);
    return answer;
  };
}

/** The words of one attempt of a model call, told to `sink`: begun at once, ended whatever happens, never failing the call. */
interface CallWords {
  add(deltas: readonly AnswerDelta[]): void;
  end(outcome: ModelCallOutcome, finishReason?: string | null): Promise<void>;
}

function callWords(sink: ModelWordSink | undefined, info: { workflowExecution?: { runId: string } | undefined; activityId: string; attempt: number }): CallWords | undefined {
  if (sink === undefined) return undefined;
  const call = `${info.workflowExecution?.runId ?? 'no-run'}/${info.activityId}`;
  // A retried attempt (after a crash, a timeout, a 5xx) tells readers to drop what the one before it wrote.
  sink.publish(info.attempt > 1 ? { type: 'reset', call, attempt: info.attempt } : { type: 'start', call, attempt: 1 }, true);
  let first = true;
  let ended = false;
  return {
    add(deltas) {
      for (const delta of deltas) {
        // The first words go at once (what a reader waits for), and so does a tool call's name; the rest with the batch.
        sink.publish({ ...delta, call, attempt: info.attempt }, first || delta.type === 'tool');
        first = false;
      }
    },
    async end(outcome, finishReason) {
      if (ended) return;
      ended = true;
      sink.publish({ type: 'end', call, attempt: info.attempt, outcome, ...(finishReason !== undefined ? { finishReason } : {}) }, true);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), WORDS_CLOSE_MS)));
      try {
        const delivered = await Promise.race([sink.close(), late]);
        if (delivered === 'late') Context.current().log.warn(`the words of model call ${call} did not reach the session's stream within ${WORDS_CLOSE_MS} ms; the answer is in the session all the same`);
      } catch (error) {
        Context.current().log.warn(`the words of model call ${call} could not be streamed (${error instanceof Error ? error.message : String(error)}); the answer is in the session all the same`);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** What a streamed request came to: the whole answer; a refusal to stream; or an answer that came whole instead of streamed. */
type Streamed = { kind: 'completion'; completion: ChatCompletion } | { kind: 'refused'; why: string } | { kind: 'answered'; completion: ChatCompletion; why: string };

/**
 * Asks `request` streamed and puts the answer together as its chunks come, giving each chunk's
 * words to `words`. Abandoned (as a timeout) when no chunk comes for `idleMs`.
 */
async function streamedCompletion(openai: OpenAI, request: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal, idleMs: number, words: CallWords | undefined): Promise<Streamed> {
  const quiet = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const stillTalking = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => quiet.abort(), idleMs);
  };
  stillTalking();
  try {
    const { data: chunks, response } = await openai.chat.completions
      .create({ ...request, stream: true, stream_options: { include_usage: true } }, { signal: AbortSignal.any([signal, quiet.signal]) })
      .withResponse();
    const type = response.headers.get('content-type') ?? '';
    if (!/^text\/event-stream\b/i.test(type)) {
      const body: unknown = await response.json().catch(() => undefined);
      const why = `it answered a streamed request with ${type.split(';')[0] || 'no content type'}, not Server-Sent Events`;
      return isCompletion(body) ? { kind: 'answered', completion: body, why } : { kind: 'refused', why };
    }
    const assembler = new CompletionAssembler();
    for await (const chunk of chunks) {
      stillTalking();
      // Added whether or not anyone hears the words: the answer is put together from them.
      const deltas = assembler.add(chunk);
      words?.add(deltas);
    }
    if (!assembler.finished) throw new IncompleteStreamError();
    return { kind: 'completion', completion: assembler.completion() };
  } catch (error) {
    if (quiet.signal.aborted && !signal.aborted) throw new APIConnectionTimeoutError();
    const refusal = streamingRefusal(error);
    if (refusal !== undefined) return { kind: 'refused', why: refusal };
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** A streamed answer whose stream ended before its choice said why it finished. */
class IncompleteStreamError extends Error {
  override readonly name = 'IncompleteStreamError';
  constructor() {
    super('the model endpoint ended its stream before the answer was complete');
  }
}

/** Why `error` is an endpoint refusing to stream (a 400, 422 or 501 about `stream` or `stream_options`), or `undefined` when it is not. */
function streamingRefusal(error: unknown): string | undefined {
  if (!(error instanceof APIError) || (error.status !== 400 && error.status !== 422 && error.status !== 501)) return undefined;
  // Servers say it in the code, the parameter, or only in words: any of them naming streaming counts.
  const said = [error.code, error.param, serverMessage(error)].filter((part): part is string => typeof part === 'string');
  return said.some((part) => /stream/i.test(part)) ? `HTTP ${error.status}: ${serverMessage(error)}` : undefined;
}

function isCompletion(body: unknown): body is ChatCompletion {
  return typeof body === 'object' && body !== null && Array.isArray((body as { choices?: unknown }).choices);
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
