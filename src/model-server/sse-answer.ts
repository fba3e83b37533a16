import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';

/** How the scripted model answers a request that asks `stream: true`. */
export interface StreamingOptions {
  /**
   * `sse` (the default): Server-Sent Events chunks, as OpenAI streams; `refuse`: a 400 saying
   * this model does not stream (as some OpenAI-compatible servers answer); `json`: the whole
   * answer as plain JSON, ignoring `stream` (as others do).
   */
  mode?: 'sse' | 'refuse' | 'json';
  /** Tokens sent per second, each after the one before (default 0: as fast as the socket takes them). */
  tokensPerSecond?: number;
  /** Characters of text (or of a tool call's arguments) per token chunk (default 4, the usage's own count). */
  tokenChars?: number;
}

/** One chunk of a streamed answer, and whether it is a token (sent at the configured pace) or framing (sent at once). */
export interface PacedChunk {
  chunk: ChatCompletionChunk;
  token: boolean;
}

/**
 * The chunks OpenAI's streaming wire format sends for `completion`: the role; the text, one token
 * of `tokenChars` characters per chunk; each tool call's id, type and name in one chunk, then its
 * arguments a token at a time; the finish reason; and, when `includeUsage` (the request's
 * `stream_options.include_usage`), a last chunk with no choices and the usage. Put back together
 * they are exactly `completion`, so a streamed answer and a plain one count and record the same.
 */
export function completionChunks(completion: ChatCompletion, options: { tokenChars?: number; includeUsage: boolean }): PacedChunk[] {
  const size = Math.max(1, options.tokenChars ?? 4);
  const choice = completion.choices[0]!;
  const head = { id: completion.id, object: 'chat.completion.chunk' as const, created: completion.created, model: completion.model };
  const chunk = (delta: ChatCompletionChunk.Choice.Delta, finish: ChatCompletionChunk.Choice['finish_reason'] = null): ChatCompletionChunk => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const out: PacedChunk[] = [{ chunk: chunk({ role: 'assistant', content: '' }), token: false }];
  for (const piece of pieces(choice.message.content ?? '', size)) out.push({ chunk: chunk({ content: piece }), token: true });
  (choice.message.tool_calls ?? []).forEach((call, index) => {
    if (call.type !== 'function') return;
    out.push({ chunk: chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }), token: true });
    for (const piece of pieces(call.function.arguments, size)) out.push({ chunk: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }), token: true });
  });
  out.push({ chunk: chunk({}, choice.finish_reason), token: false });
  if (options.includeUsage && completion.usage !== undefined) out.push({ chunk: { ...head, choices: [], usage: completion.usage }, token: false });
  return out;
}

/** `text` in pieces of `size` characters (code points, so no surrogate pair is split). */
function pieces(text: string, size: number): string[] {
  const points = [...text];
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}
