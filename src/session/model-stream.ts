/**
 * The words of a model call as they arrive, outside the session's history: the events the model
 * call activity appends to the session's stream in the stream store (`src/streams`), how a reader
 * checks them, and how a reader puts them together into the answer being written. Pure: no
 * Temporal, no Node built-ins.
 *
 * The durable answer is the activity's result, in the session's history; these events only show
 * it growing. A reader that misses some (it connected late, the stream was cut) loses nothing
 * that matters: the session's conversation has the whole answer once the model call returns.
 */

/** How a model call ended, as its last event says: `failed` and `cancelled` leave no answer. */
export type ModelCallOutcome = 'completed' | 'failed' | 'cancelled';

/**
 * One event of a model call. `call` names the call (the session's run and the activity), the
 * same on every attempt of it; `attempt` is the activity's attempt that wrote it (an earlier
 * attempt, cut off by a timeout on a worker that still runs, may still write a little: readers
 * pass its words over).
 * - `start`: the first attempt began; `reset`: a retried attempt began (after a crash, a timeout,
 *   a 5xx): drop what the earlier attempt wrote, its words start again;
 * - `text`: words of the answer, in order; `tool`: the model began tool call `index` (its name
 *   is known, its id when the model sent one); `arguments`: more of that call's arguments;
 * - `end`: the call is over; with `completed`, the answer is whole and the session records it next.
 */
export type ModelStreamEvent =
  | { type: 'start'; call: string; attempt: number }
  | { type: 'reset'; call: string; attempt: number }
  | { type: 'text'; call: string; attempt: number; text: string }
  | { type: 'tool'; call: string; attempt: number; index: number; name: string; id?: string }
  | { type: 'arguments'; call: string; attempt: number; index: number; text: string }
  | { type: 'end'; call: string; attempt: number; outcome: ModelCallOutcome; finishReason?: string | null };

/** The types of {@link ModelStreamEvent}, as their `type` (and their SSE `event:` name) says. */
export const MODEL_STREAM_EVENT_TYPES = ['start', 'reset', 'text', 'tool', 'arguments', 'end'] as const;

/** Longest text one event may carry: far more than a model sends in one chunk. */
export const MAX_EVENT_TEXT = 64 * 1024;

/** The most tool calls one answer is followed through (an index at or past it is dropped). */
export const MAX_STREAMED_TOOL_CALLS = 128;

const OUTCOMES: readonly string[] = ['completed', 'failed', 'cancelled'];

/**
 * `value` as a {@link ModelStreamEvent}, or `undefined` when it is not one. A stored row can
 * hold anything (a bug, another writer, a hand edit), so a reader checks every event and passes
 * over one that is malformed (and says so, if it wants) rather than trusting it.
 */
export function parseModelStreamEvent(value: unknown): ModelStreamEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const event = value as Record<string, unknown>;
  const call = event.call;
  if (typeof call !== 'string' || call === '' || call.length > 200) return undefined;
  const text = (field: unknown): field is string => typeof field === 'string' && field.length <= MAX_EVENT_TEXT;
  const count = (field: unknown, max: number): field is number => typeof field === 'number' && Number.isInteger(field) && field >= 0 && field < max;
  const attempt = event.attempt;
  if (!count(attempt, 1_000_000) || attempt < 1) return undefined;
  switch (event.type) {
    case 'start':
    case 'reset':
      return { type: event.type, call, attempt };
    case 'text':
      return text(event.text) ? { type: 'text', call, attempt, text: event.text } : undefined;
    case 'tool':
      if (!count(event.index, MAX_STREAMED_TOOL_CALLS) || typeof event.name !== 'string' || event.name.length > 200) return undefined;
      if (event.id !== undefined && (typeof event.id !== 'string' || event.id.length > 200)) return undefined;
      return { type: 'tool', call, attempt, index: event.index, name: event.name, ...(event.id !== undefined ? { id: event.id as string } : {}) };
    case 'arguments':
      return count(event.index, MAX_STREAMED_TOOL_CALLS) && text(event.text) ? { type: 'arguments', call, attempt, index: event.index, text: event.text } : undefined;
    case 'end': {
      if (typeof event.outcome !== 'string' || !OUTCOMES.includes(event.outcome)) return undefined;
      const finish = event.finishReason;
      if (finish !== undefined && finish !== null && (typeof finish !== 'string' || finish.length > 100)) return undefined;
      return { type: 'end', call, attempt, outcome: event.outcome as ModelCallOutcome, ...(finish !== undefined ? { finishReason: finish as string | null } : {}) };
    }
    default:
      return undefined;
  }
}

/** A tool call as it is being written. */
export interface LiveToolCall {
  index: number;
  name: string;
  id?: string;
  arguments: string;
}

/** The answer of one model call as its events have built it so far. */
export interface LiveAnswer {
  call: string;
  attempt: number;
  text: string;
  /** By index, in the order the model began them. */
  toolCalls: LiveToolCall[];
  /** How the call ended, once its `end` came. */
  outcome?: ModelCallOutcome;
}

/**
 * The answer after `event`: `start` and `reset` begin a new one (a `reset` drops what the
 * earlier attempt wrote), the others add to the answer of their call and attempt. An event of
 * another call or attempt than the current one, other than a newer `start` or `reset`, finds no
 * answer to add to and is passed over (a reader that connected in the middle of a call sees it from its next attempt, or
 * not at all; the durable answer is in the session either way).
 *
 * @example
 * let answer: LiveAnswer | null = null;
 * for (const event of events) answer = applyModelStreamEvent(answer, event);
 */
export function applyModelStreamEvent(current: LiveAnswer | null, event: ModelStreamEvent): LiveAnswer | null {
  const sameCall = current !== null && current.call === event.call;
  if (event.type === 'start' || event.type === 'reset') {
    // A late start or reset of an attempt already superseded changes nothing.
    if (sameCall && event.attempt < current.attempt) return current;
    return { call: event.call, attempt: event.attempt, text: '', toolCalls: [] };
  }
  if (!sameCall || current.attempt !== event.attempt || current.outcome !== undefined) return current;
  switch (event.type) {
    case 'text':
      return { ...current, text: current.text + event.text };
    case 'tool':
      if (current.toolCalls.some((call) => call.index === event.index)) return current;
      return { ...current, toolCalls: [...current.toolCalls, { index: event.index, name: event.name, ...(event.id !== undefined ? { id: event.id } : {}), arguments: '' }] };
    case 'arguments':
      return { ...current, toolCalls: current.toolCalls.map((call) => (call.index === event.index ? { ...call, arguments: call.arguments + event.text } : call)) };
    case 'end':
      return { ...current, outcome: event.outcome };
  }
}
