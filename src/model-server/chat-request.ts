import { z } from 'zod';
import { formatPath } from '../todo';
import { MESSAGE_ROLES } from './script';

/** One message of a request, reduced to what a script can look at. */
export interface ChatMessage {
  role: (typeof MESSAGE_ROLES)[number];
  /** The text of `content`: the string, the `text` of its parts joined, or `''` for none. */
  text: string;
  /** `tool_call_id` of a tool message. */
  toolCallId?: string;
  /** The ids of an assistant message's `tool_calls`, in order. */
  toolCallIds: string[];
}

/** A chat-completions request body, checked. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** The names of the function tools offered in `tools`. */
  toolNames: string[];
  stream: boolean;
  /** `stream_options.include_usage`: a streamed answer ends with a chunk carrying the usage. */
  includeUsage: boolean;
  /** Length of the JSON of `messages`, the base of the prompt's token count. */
  promptChars: number;
}

const contentSchema = z.union([
  z.string(),
  z.null(),
  z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
]);

// Loose where OpenAI's API has fields this server ignores (temperature, tool_choice...), strict
// in the types of the fields it reads: a malformed request is refused, never half-understood.
const requestSchema = z.looseObject({
  model: z.string().min(1, 'you must provide a model parameter'),
  messages: z
    .array(
      z.looseObject({
        role: z.enum(MESSAGE_ROLES),
        content: contentSchema.optional(),
        tool_call_id: z.string().optional(),
        tool_calls: z.array(z.looseObject({ id: z.string() })).nullable().optional(),
      }),
    )
    .min(1, 'messages must hold at least one message'),
  tools: z
    .array(z.looseObject({ type: z.string(), function: z.looseObject({ name: z.string() }).optional() }))
    .nullable()
    .optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullable().optional() }).nullable().optional(),
});

/**
 * Checks a parsed JSON body as a chat-completions request.
 *
 * @returns the request, or the sentence saying which field is wrong and how.
 */
export function parseChatRequest(body: unknown): { ok: true; request: ChatRequest } | { ok: false; message: string } {
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const place = issue === undefined ? 'the body' : formatPath(issue.path).replace(/^arguments$/, 'the body');
    return { ok: false, message: `invalid chat-completions request: ${place}: ${issue?.message ?? 'malformed'}` };
  }
  const data = parsed.data;
  return {
    ok: true,
    request: {
      model: data.model,
      messages: data.messages.map((m) => ({
        role: m.role,
        text: textOf(m.content),
        ...(m.tool_call_id !== undefined ? { toolCallId: m.tool_call_id } : {}),
        toolCallIds: (m.tool_calls ?? []).map((call) => call.id),
      })),
      toolNames: (data.tools ?? []).flatMap((tool) => (tool.function !== undefined ? [tool.function.name] : [])),
      stream: data.stream === true,
      includeUsage: data.stream_options?.include_usage === true,
      promptChars: JSON.stringify(data.messages).length,
    },
  };
}

function textOf(content: z.infer<typeof contentSchema> | undefined): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => part.text ?? '').join('');
  return '';
}
