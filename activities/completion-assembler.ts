import type { ChatCompletion, ChatCompletionChunk, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';

/** What a chunk added to the answer, as the stream tells readers (see `ModelStreamEvent`, without the call). */
export type AnswerDelta =
  | { type: 'text'; text: string }
  | { type: 'tool'; index: number; name: string; id?: string }
  | { type: 'arguments'; index: number; text: string };

interface ToolCallSoFar {
  id: string;
  name: string;
  arguments: string;
  /** Whether its `tool` delta went out (once the name is known); arguments before it wait in `held`. */
  told: boolean;
  held: string;
}

/**
 * Puts a streamed chat completion back together, chunk by chunk, into the completion the same
 * request would have answered without streaming: the text, the tool calls by their index (id,
 * name, arguments), the finish reason and the usage (`stream_options.include_usage`). Each chunk
 * also gives what it added, for readers of the session's stream: the text, a tool call's name as
 * soon as it is known, its arguments as they grow.
 *
 * Only the first choice is followed: the agent loop asks for one.
 */
export class CompletionAssembler {
  private id: string | undefined;
  private created = 0;
  private model = '';
  private text = '';
  private sawText = false;
  private sawChoice = false;
  private readonly calls = new Map<number, ToolCallSoFar>();
  private finishReason: ChatCompletion.Choice['finish_reason'] | null = null;
  private usage: ChatCompletion['usage'];

  /** Adds `chunk`; answers what it added to the answer. */
  add(chunk: ChatCompletionChunk): AnswerDelta[] {
    this.id ??= chunk.id;
    if (this.created === 0 && typeof chunk.created === 'number') this.created = chunk.created;
    if (this.model === '' && typeof chunk.model === 'string') this.model = chunk.model;
    if (chunk.usage !== undefined && chunk.usage !== null) this.usage = chunk.usage;
    const choice = (chunk.choices ?? []).find((c) => c.index === 0);
    if (choice === undefined) return [];
    this.sawChoice = true;
    const deltas: AnswerDelta[] = [];
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.sawText = true;
      this.text += delta.content;
      deltas.push({ type: 'text', text: delta.content });
    }
    for (const part of delta.tool_calls ?? []) {
      const index = part.index;
      let call = this.calls.get(index);
      if (call === undefined) {
        call = { id: '', name: '', arguments: '', told: false, held: '' };
        this.calls.set(index, call);
      }
      if (typeof part.id === 'string' && part.id !== '' && call.id === '') call.id = part.id;
      if (typeof part.function?.name === 'string') call.name += part.function.name;
      if (!call.told && call.name !== '') {
        call.told = true;
        deltas.push({ type: 'tool', index, name: call.name, ...(call.id !== '' ? { id: call.id } : {}) });
        if (call.held !== '') deltas.push({ type: 'arguments', index, text: call.held });
        call.held = '';
      }
      const more = part.function?.arguments;
      if (typeof more === 'string' && more !== '') {
        call.arguments += more;
        if (call.told) deltas.push({ type: 'arguments', index, text: more });
        else call.held += more;
      }
    }
    if (choice.finish_reason !== null && choice.finish_reason !== undefined) this.finishReason = choice.finish_reason;
    return deltas;
  }

  /** Whether the answer is complete: its choice said why it finished. */
  get finished(): boolean {
    return this.finishReason !== null;
  }

  /** The completion the chunks make. */
  completion(): ChatCompletion {
    const toolCalls: ChatCompletionMessageToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }));
    return {
      id: this.id ?? '',
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: this.sawChoice
        ? [
            {
              index: 0,
              // A plain answer says `null` for an answer without text; so does this one.
              message: { role: 'assistant', content: this.sawText ? this.text : null, refusal: null, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
              logprobs: null,
              finish_reason: this.finishReason ?? 'stop',
            },
          ]
        : [],
      ...(this.usage !== undefined ? { usage: this.usage } : {}),
    };
  }
}

/** What a whole answer says, as the deltas a stream of it would have given (for an answer that came in one piece). */
export function deltasOf(completion: ChatCompletion): AnswerDelta[] {
  const message = completion.choices?.[0]?.message;
  if (message === undefined) return [];
  const deltas: AnswerDelta[] = [];
  if (typeof message.content === 'string' && message.content !== '') deltas.push({ type: 'text', text: message.content });
  (message.tool_calls ?? []).forEach((call, index) => {
    if (call.type !== 'function') return;
    deltas.push({ type: 'tool', index, name: call.function.name, ...(call.id ? { id: call.id } : {}) });
    if (call.function.arguments) deltas.push({ type: 'arguments', index, text: call.function.arguments });
  });
  return deltas;
}
