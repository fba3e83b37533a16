import { renderTodoList } from '../todo/render-list';
import { type TodoList } from '../todo/todo-item';
import { messageChars, type ChatMessage } from './agent-state';

/** Longest tool result kept in the conversation; longer ones are cut, saying so. */
export const MAX_TOOL_RESULT_CHARS = 16_000;

/** Longest user message a session accepts. */
export const MAX_USER_MESSAGE_CHARS = 32_000;

/**
 * How many messages may wait behind the running turn. The queue is carried across
 * continue-as-new with the rest of the agent's state, so it must stay far below Temporal's 2 MB
 * payload limit: 10 × 32,000 characters is at most ~1.3 MB of UTF-8 in the worst case, and a
 * sender that outpaces the agent this much is better told to wait than buffered.
 */
export const MAX_QUEUED_MESSAGES = 10;

/** Cuts a tool's output to {@link MAX_TOOL_RESULT_CHARS}, saying how much was left out. */
export function boundToolResult(text: string): string {
  if (text.length <= MAX_TOOL_RESULT_CHARS) return text;
  const kept = text.slice(0, MAX_TOOL_RESULT_CHARS - 200);
  return `${kept}\n[… ${text.length - kept.length} more characters not shown]`;
}

/**
 * The conversation cut to fit `maxChars`: the oldest messages go first, whole exchanges at a
 * time (an assistant message with tool calls leaves together with their results, so the model
 * never sees a result without its call). Earlier turns go before anything of the current turn;
 * of the current turn, its first message (what was asked) and its last exchange always stay.
 * A note at the start says how many messages were dropped in all.
 *
 * @param turnStart index of the current turn's first message in `conversation`.
 * @returns the kept conversation, the new index of the turn's first message, and how many
 *   messages this call dropped (0: unchanged).
 */
export function compactConversation(
  conversation: readonly ChatMessage[],
  maxChars: number,
  turnStart: number,
): { conversation: ChatMessage[]; turnStart: number; dropped: number } {
  const unchanged = { conversation: [...conversation], turnStart, dropped: 0 };
  const size = (from: number, to: number): number => conversation.slice(from, to).reduce((sum, m) => sum + messageChars(m), 0);
  if (size(0, conversation.length) <= maxChars) return unchanged;
  // Drop to well under the limit, so compaction does not run again on the very next call.
  const target = Math.floor(maxChars * 0.6);
  const first = conversation[0];
  const hasNote = first?.role === 'system' && first.content.startsWith(DROPPED_NOTE);
  const earlier = hasNote ? previousDropped(first.content) : 0;
  let chars = size(hasNote ? 1 : 0, conversation.length);

  // 1. Earlier turns, oldest first.
  let cut = hasNote ? 1 : 0;
  while (chars > target && cut < turnStart) {
    const end = Math.min(exchangeEnd(conversation, cut), turnStart);
    chars -= size(cut, end);
    cut = end;
  }
  // 2. The current turn's middle: after its first message, before its last exchange.
  const lastExchange = lastExchangeStart(conversation, turnStart + 1);
  let middle = turnStart + 1;
  while (chars > target && middle < lastExchange) {
    const end = Math.min(exchangeEnd(conversation, middle), lastExchange);
    chars -= size(middle, end);
    middle = end;
  }
  const dropped = cut - (hasNote ? 1 : 0) + (middle - (turnStart + 1));
  if (dropped === 0) return unchanged;
  const note: ChatMessage = { role: 'system', content: `${DROPPED_NOTE} ${earlier + dropped} earlier messages were dropped to fit the context.` };
  const kept = [note, ...conversation.slice(cut, turnStart + 1), ...conversation.slice(middle)];
  return { conversation: kept, turnStart: 1 + (turnStart - cut), dropped };
}

const DROPPED_NOTE = '[context compacted]';

function previousDropped(note: string): number {
  const match = /(\d+) earlier messages/.exec(note);
  return match ? Number(match[1]) : 0;
}

/** The index just after the exchange that starts at `start`: a message and, for tool calls, their results. */
function exchangeEnd(conversation: readonly ChatMessage[], start: number): number {
  let end = start + 1;
  while (end < conversation.length && conversation[end]!.role === 'tool') end++;
  return end;
}

/** Where the last exchange at or after `from` starts (the end of the conversation when there is none). */
function lastExchangeStart(conversation: readonly ChatMessage[], from: number): number {
  let start = conversation.length;
  for (let i = conversation.length - 1; i >= from; i--) {
    if (conversation[i]!.role !== 'tool') {
      start = i;
      break;
    }
  }
  return start;
}

/**
 * The messages sent to the model: the system prompt, then — once older messages were dropped —
 * the current plan, read from the session's list (the fold of the log, not a copy kept in the
 * conversation, so compaction can never lose it), then the conversation.
 */
export function messagesForModel(systemPrompt: string, conversation: readonly ChatMessage[], compacted: boolean, todos: TodoList): ChatMessage[] {
  const messages: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
  if (compacted && todos !== null) {
    messages.push({
      role: 'system',
      content: `Your current todo list (the session's own record; earlier messages were dropped, this list was not):\n${renderTodoList(todos)}`,
    });
  }
  return [...messages, ...conversation];
}

/**
 * The one reminder a model gets when it ends a turn while todos are still open, or `undefined`
 * when none are.
 *
 * @example nudgeMessage([{ content: 'Run lint', status: 'pending' }]) // '1 todo is still open: …'
 */
export function nudgeMessage(todos: TodoList): string | undefined {
  const open = (todos ?? []).filter((todo) => todo.status !== 'completed');
  if (open.length === 0) return undefined;
  const listed = open.slice(0, 10).map((todo) => `"${todo.content}" (${todo.status})`);
  if (open.length > listed.length) listed.push(`and ${open.length - listed.length} more`);
  return (
    `${open.length} todo${open.length === 1 ? ' is' : 's are'} still open: ${listed.join(', ')}; ` +
    'continue the work, or update the list with todo_write if the plan changed.'
  );
}
