import type { ChatMessage, PendingApproval, ToolCall, TurnOutcome, Usage } from '../session';
import type { Transcript } from '../../workflows/messages';

/** Longest one-line rendering of a tool call's arguments or a tool's result while a turn is followed. */
export const LINE_CHARS = 160;

/** Longest tool result `agent-sessions transcript` shows before cutting it. */
export const TRANSCRIPT_RESULT_CHARS = 600;

/** `text` cut to `max` characters, saying how many were left out. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const left = text.length - max;
  return `${text.slice(0, max)}… (${left} more character${left === 1 ? '' : 's'})`;
}

/** `text` on one line: every run of whitespace (newlines included) becomes one space. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * A tool call's arguments as compact JSON (the model may send them spaced out, or not as JSON
 * at all: then the text as it came), on one line.
 */
export function compactArguments(args: string): string {
  try {
    return JSON.stringify(JSON.parse(args));
  } catch {
    return oneLine(args);
  }
}

/**
 * Whether a tool's result is a refused `todo_write`: the session's validator refused the list,
 * and its message says `rejected` and names the rule as `[rule]`. An accepted write always
 * answers `Updated todo list: …`.
 */
export function isRejectedWrite(toolName: string | undefined, content: string): boolean {
  if (toolName !== 'todo_write' || content.startsWith('Updated todo list')) return false;
  return /\brejected\b/i.test(content) || /\[[a-z][a-z-]*\]/.test(content);
}

/** `→ todo_write {"todos":[…]}`: a tool call as it is made, shortened to one line. */
export function renderToolCall(call: ToolCall, max = LINE_CHARS): string {
  return `→ ${call.function.name} ${shorten(compactArguments(call.function.arguments), max)}`;
}

/** The rules a refusal names (`[parallel-in-progress]`), in order, each once. */
function namedRules(content: string): string[] {
  return [...new Set([...content.matchAll(/\[([a-z][a-z-]*)\]/g)].map((match) => match[1]!))];
}

/**
 * `← Updated todo list: …`, or `← ✗ REJECTED [rule] …` for a refused write (the rule first, so
 * shortening never hides it): a tool result on one line.
 */
export function renderToolResult(toolName: string | undefined, content: string, max = LINE_CHARS): string {
  if (!isRejectedWrite(toolName, content)) return `← ${shorten(oneLine(content), max)}`;
  const rules = namedRules(content).map((rule) => `[${rule}]`);
  return `← ✗ REJECTED ${rules.length > 0 ? `${rules.join(' ')} ` : ''}${shorten(oneLine(content), max)}`;
}

/** The line that tells a person a call waits for them, with the two commands that decide it. */
export function renderApproval(sessionId: string, pending: PendingApproval): string {
  const args = shorten(compactArguments(pending.arguments), LINE_CHARS);
  return (
    `waiting for approval: call ${pending.callId} ${pending.name} ${args} — ` +
    `agent-sessions approve ${sessionId} ${pending.callId} (or: agent-sessions deny ${sessionId} ${pending.callId} --reason TEXT)`
  );
}

/** How a turn ended, in one sentence: `turn 2 (message 3) completed`, `… ended: interrupted (interrupted by a person)`. */
export function renderOutcome(outcome: TurnOutcome): string {
  const head = `turn ${outcome.turn} (message ${outcome.messageId})`;
  if (outcome.reason === 'completed') return `${head} completed`;
  return `${head} ended: ${outcome.reason}${outcome.detail ? ` (${outcome.detail})` : ''}`;
}

/** The name of each tool call of a conversation, by call id, so a result can be labelled with its tool. */
export function toolNamesById(messages: readonly ChatMessage[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
  }
  return names;
}

const ROLE_WIDTH = 'assistant'.length;

function labelled(role: string, text: string): string {
  const pad = ' '.repeat(ROLE_WIDTH + 2);
  const [first = '', ...rest] = text.split('\n');
  return [`${role.padEnd(ROLE_WIDTH)}  ${first}`, ...rest.map((line) => `${pad}${line}`)].join('\n');
}

/**
 * A conversation as a person reads it: one block per message, labelled with its role; each
 * tool call with its id and arguments, each tool result with its tool's name (cut when long),
 * a refused `todo_write` marked `✗ REJECTED`. Ends with the last turn's outcome and the usage.
 */
export function renderTranscript(transcript: Transcript): string {
  const names = toolNamesById(transcript.messages);
  const blocks: string[] = [];
  if (transcript.compacted) blocks.push('(older messages were dropped to fit the context)');
  if (transcript.messages.length === 0) blocks.push('(no messages yet: send one with agent-sessions chat)');
  for (const message of transcript.messages) {
    switch (message.role) {
      case 'system':
      case 'user':
        blocks.push(labelled(message.role, message.content));
        break;
      case 'assistant':
        if (message.content !== null && message.content !== '') blocks.push(labelled('assistant', message.content));
        for (const call of message.tool_calls ?? []) {
          blocks.push(labelled('assistant', `→ ${call.function.name} ${shorten(compactArguments(call.function.arguments), TRANSCRIPT_RESULT_CHARS)}  [${call.id}]`));
        }
        break;
      case 'tool': {
        const name = names.get(message.tool_call_id);
        const mark = isRejectedWrite(name, message.content) ? '✗ REJECTED ' : '';
        blocks.push(labelled('tool', `← ${mark}${name ?? '?'} [${message.tool_call_id}]: ${shorten(message.content, TRANSCRIPT_RESULT_CHARS)}`));
        break;
      }
    }
  }
  const last = transcript.lastTurn;
  blocks.push(last === null ? 'no turn has ended yet' : renderOutcome(last));
  blocks.push(`usage: ${renderUsageLine(transcript.usage)}`);
  return blocks.join('\n');
}

/** `1,234 tokens (1,000 prompt + 234 completion) in 5 model calls; 812 output chars, 640 of them todo_write`. */
export function renderUsageLine(usage: Usage): string {
  const n = (value: number): string => value.toLocaleString('en-US');
  return (
    `${n(usage.total_tokens)} tokens (${n(usage.prompt_tokens)} prompt + ${n(usage.completion_tokens)} completion) ` +
    `in ${n(usage.model_calls)} model call${usage.model_calls === 1 ? '' : 's'}; ` +
    `${n(usage.output_chars)} output chars, ${n(usage.todo_write_chars)} of them todo_write`
  );
}

/** The fields of a usage, in the order the contract lists them. */
const USAGE_FIELDS = ['prompt_tokens', 'completion_tokens', 'total_tokens', 'model_calls', 'output_chars', 'todo_write_chars'] as const;

/** `agent-sessions usage` for a person: one row per field, this session beside the whole tree. */
export function renderUsageTable(sessionId: string, usage: { session: Usage; tree: Usage }): string {
  const rows = [['', 'SESSION', 'TREE'], ...USAGE_FIELDS.map((field) => [field, String(usage.session[field]), String(usage.tree[field])])];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const table = rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[column]!))).join('  '));
  return [`usage of session ${sessionId} (TREE: with every subagent below it)`, ...table].join('\n');
}
