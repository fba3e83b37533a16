import { InvariantViolation } from '../todo/invariant';
import type { WithheldTool } from './tool-pins';

/**
 * The agent loop's state: the conversation with the model, the messages waiting for a turn,
 * tool calls waiting for a person, and the usage the model reported. Everything here is derived
 * from what history records (accepted updates, activity results), so replay rebuilds it; it is
 * carried across continue-as-new beside the session's state.
 */

/** A function call the model asked for, in the chat-completions wire format. */
export interface ToolCall {
  /** The model's own id of the call (what a person approves or denies). */
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One message of the conversation, in the chat-completions wire format. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** Tokens and calls, summed. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  model_calls: number;
  /** Characters of the model's output (its text and every tool call's arguments). */
  output_chars: number;
  /** Of those, characters of `todo_write` arguments: what the whole-list rewrite costs. */
  todo_write_chars: number;
}

/** A message waiting for its turn (a message sent while a turn runs waits for the next one). */
export interface QueuedMessage {
  /** Numbered from 1 in the order the session accepted them. */
  id: number;
  text: string;
  at: string | null;
  /**
   * The W3C `traceparent` of the request that sent it, when that request was traced: its turn
   * belongs to that trace. Read from the update's header in history, so replay finds it again.
   */
  trace?: string;
}

/** A tool call waiting for a person's decision. */
export interface PendingApproval {
  callId: string;
  name: string;
  /** The call's arguments as the model sent them (JSON text). */
  arguments: string;
  since: string | null;
}

/** How a turn ended. */
export type TurnEndReason = 'completed' | 'interrupted' | 'max-steps' | 'model-error' | 'closed';

/** The last turn the loop ran, as the session query shows it. */
export interface TurnOutcome {
  /** The session's turn number. */
  turn: number;
  /** The id of the message that started it. */
  messageId: number;
  reason: TurnEndReason;
  /** The model's final answer, when it gave one. */
  answer: string | null;
  /** What went wrong, for a turn that did not complete. */
  detail: string | null;
  endedAt: string | null;
  /** The id of the turn's trace (32 hex digits), when the request that began it was traced. */
  traceId?: string;
}

/** What the loop is doing right now. */
export type AgentActivity =
  | { state: 'idle' }
  | { state: 'starting'; messageId: number }
  | { state: 'calling-model'; turn: number; step: number }
  | { state: 'running-tools'; turn: number; step: number; tools: string[] }
  | { state: 'waiting-approval'; turn: number; step: number; callIds: string[] };

/** Everything the agent loop knows. */
export interface AgentState {
  conversation: ChatMessage[];
  /** Whether older messages were dropped to fit the context (the plan is then put back in front of the model). */
  compacted: boolean;
  queue: QueuedMessage[];
  /** The id the next accepted message gets. */
  nextMessageId: number;
  pendingApprovals: PendingApproval[];
  usage: Usage;
  activity: AgentActivity;
  lastTurn: TurnOutcome | null;
  /**
   * The turns that ended last, oldest first, at most {@link RECENT_TURNS_KEPT}: a watcher that
   * looked away while its turn ended and the next one ran still finds how its own ended. Absent
   * in a state carried from a run recorded before it was kept.
   */
  recentTurns?: TurnOutcome[];
  /**
   * The hash of each tool's definition (by the name the model sees) from the turn the session
   * first offered it: a tool whose definition differs later is withheld until accepted. Absent
   * in a state from a build before MCP tools, and until a turn offers one.
   */
  toolPins?: Record<string, string>;
  /** The tools the last turn withheld because their definitions changed (absent: none). */
  withheldTools?: WithheldTool[];
  /** Grows with every change of this state: a cheap "has anything changed" for watchers. */
  revision: number;
}

/**
 * How many ended turns the agent state keeps: a message can wait behind at most 10 others (the
 * queue's bound), so the turn of any message a watcher saw accepted is among the last 12 for as
 * long as the messages queued with it run.
 */
export const RECENT_TURNS_KEPT = 12;

/** No usage at all. */
export const NO_USAGE: Readonly<Usage> = Object.freeze({
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  model_calls: 0,
  output_chars: 0,
  todo_write_chars: 0,
});

/** The agent state of a session that has never been sent a message. */
export const INITIAL_AGENT_STATE: Readonly<AgentState> = Object.freeze<AgentState>({
  conversation: [],
  compacted: false,
  queue: [],
  nextMessageId: 1,
  pendingApprovals: [],
  usage: NO_USAGE,
  activity: { state: 'idle' },
  lastTurn: null,
  recentTurns: [],
  revision: 0,
});

/** Adds two usages. */
export function addUsage(a: Usage, b: Partial<Usage>): Usage {
  const n = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
  return {
    prompt_tokens: a.prompt_tokens + n(b.prompt_tokens),
    completion_tokens: a.completion_tokens + n(b.completion_tokens),
    total_tokens: a.total_tokens + n(b.total_tokens),
    model_calls: a.model_calls + n(b.model_calls),
    output_chars: a.output_chars + n(b.output_chars),
    todo_write_chars: a.todo_write_chars + n(b.todo_write_chars),
  };
}

/** Characters of a message, as the context budget counts them. */
export function messageChars(message: ChatMessage): number {
  let chars = (message.content ?? '').length;
  if (message.role === 'assistant') for (const call of message.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length;
  return chars;
}

/**
 * Checks the agent state a session carries across continue-as-new before the new run trusts
 * it: the conversation, the queue and the waiting calls are arrays of the right shapes, the
 * usage is numbers.
 *
 * @param where names the state in a message (a fork's agent state is checked the same way).
 * @throws InvariantViolation naming the carried agent state and the field.
 */
export function assertCarriedAgent(value: unknown, where = 'the agent state carried into this run'): asserts value is AgentState {
  const fail = (detail: string): never => {
    throw new InvariantViolation(where, detail);
  };
  if (typeof value !== 'object' || value === null) fail('it must be an object');
  const agent = value as Record<string, unknown>;
  for (const key of ['conversation', 'queue', 'pendingApprovals'] as const) {
    if (!Array.isArray(agent[key])) fail(`${key} must be an array`);
  }
  for (const [index, message] of (agent.conversation as unknown[]).entries()) {
    const role = (message as { role?: unknown } | null)?.role;
    if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') fail(`conversation[${index}] has no known role`);
  }
  for (const [index, queued] of (agent.queue as unknown[]).entries()) {
    const q = queued as { id?: unknown; text?: unknown } | null;
    if (typeof q?.id !== 'number' || typeof q.text !== 'string') fail(`queue[${index}] must be {id, text, at}`);
  }
  if (typeof agent.nextMessageId !== 'number' || !Number.isInteger(agent.nextMessageId) || agent.nextMessageId < 1) fail('nextMessageId must be a positive integer');
  const usage = agent.usage as Record<string, unknown> | null;
  if (typeof usage !== 'object' || usage === null || Object.keys(NO_USAGE).some((key) => typeof usage[key] !== 'number')) fail('usage must hold the token and call counts');
  if (typeof agent.revision !== 'number') fail('revision must be a number');
  const pins = agent.toolPins;
  if (pins !== undefined && (typeof pins !== 'object' || pins === null || Array.isArray(pins) || Object.values(pins).some((hash) => typeof hash !== 'string'))) {
    fail('toolPins must map tool names to definition hashes');
  }
  const withheld = agent.withheldTools;
  if (withheld !== undefined && (!Array.isArray(withheld) || withheld.some((tool) => typeof (tool as WithheldTool | null)?.name !== 'string' || typeof (tool as WithheldTool).offered !== 'string'))) {
    fail('withheldTools must be a list of {name, reason, pinned, offered}');
  }
}
