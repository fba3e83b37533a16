/* The conversation of a session's agent (`GET /sessions/{id}/transcript`): what the person asked,
 * what the model answered, and each tool call with its arguments and its result, a todo_write
 * the session refused marked as rejected. Everything here is the model's or a person's text:
 * shown as text only. */
import { h } from './dom.js';
import { liveAnswerItem } from './live-answer.js';

/** Longest tool result shown in full; longer ones are cut, saying so. */
const RESULT_CHARS = 4000;

/**
 * Whether a tool's result is a refused todo_write: an accepted write answers "Updated todo
 * list: …"; a refusal says it was rejected and names the rule as "[rule]".
 */
export function isRejectedWrite(name, content) {
  if (name !== 'todo_write' || typeof content !== 'string' || content.startsWith('Updated todo list')) return false;
  return /\brejected\b/i.test(content) || /\[[a-z][a-z-]*\]/.test(content);
}

/**
 * Whether a user-role message is the loop's own reminder (the nudge when the model ends a turn
 * with todos still open, `nudgeMessage` in src/session/agent-context.ts), not a person's words.
 */
export function isNudge(content) {
  return typeof content === 'string' && /^\d+ todos? (is|are) still open: [\s\S]*; continue the work, or update the list with todo_write if the plan changed\.$/.test(content);
}

/** What the loop does now, in words: "calling the model (turn 2, step 3)". */
export function activityText(activity) {
  if (!activity || typeof activity !== 'object') return 'unknown';
  switch (activity.state) {
    case 'idle':
      return 'idle';
    case 'starting':
      return `starting a turn for message ${activity.messageId}`;
    case 'calling-model':
      return `calling the model (turn ${activity.turn}, step ${activity.step})`;
    case 'running-tools':
      return `running ${(activity.tools || []).join(', ') || 'tools'} (turn ${activity.turn}, step ${activity.step})`;
    case 'waiting-approval':
      return `waiting for approval (turn ${activity.turn}, step ${activity.step})`;
    default:
      return String(activity.state);
  }
}

/** A tool call's arguments, indented when they are JSON, as the model sent them when they are not. */
export function prettyArguments(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return String(text);
  }
}

const MARKS = { pending: '\u25CB', in_progress: '\u25B8', completed: '\u2713' };

/**
 * A call's arguments: a todo_write's list as the list it is (one line per item, with its
 * status), anything else as indented JSON. A list that is not the tool's shape is shown as sent.
 */
function toolArguments(name, text) {
  let todos = null;
  if (name === 'todo_write') {
    try {
      const args = JSON.parse(text);
      if (args && Array.isArray(args.todos) && args.todos.every((t) => t && typeof t.content === 'string' && typeof t.status === 'string')) todos = args.todos;
    } catch {
      todos = null;
    }
  }
  if (todos === null) return h('pre', { class: 'tool-args' }, prettyArguments(text));
  return h('ul', { class: 'tool-args tool-todos', 'aria-label': 'The list sent' },
    todos.map((t) => h('li', { 'data-status': t.status },
      h('span', { class: 'tool-todo-mark', 'aria-hidden': 'true' }, MARKS[t.status] || '?'),
      h('span', { class: 'sr-only' }, `${t.status}: `),
      h('span', { class: 'tool-todo-content' }, t.content),
    )),
  );
}

function cut(text) {
  const value = String(text);
  if (value.length <= RESULT_CHARS) return value;
  return `${value.slice(0, RESULT_CHARS)}\n… ${value.length - RESULT_CHARS} more characters not shown`;
}

/** A trace id as the server sends it: 32 lowercase hex digits. */
const TRACE_ID = /^[0-9a-f]{32}$/;

/**
 * Where a turn's trace opens: the service's `traceUrl` template with the id in place of
 * `{traceId}`; null without a template, a valid id, or an http(s) result.
 */
export function traceHref(template, traceId) {
  if (typeof template !== 'string' || typeof traceId !== 'string' || !TRACE_ID.test(traceId)) return null;
  const href = template.split('{traceId}').join(traceId);
  return /^https?:\/\//i.test(href) ? href : null;
}

/** The outcome of a turn in a sentence. */
export function outcomeText(outcome) {
  const head = `Turn ${outcome.turn} (message ${outcome.messageId})`;
  if (outcome.reason === 'completed') return `${head} completed`;
  return `${head} ended: ${outcome.reason}${outcome.detail ? ` (${outcome.detail})` : ''}`;
}

/**
 * The "Conversation" card's list: `element` (the `<ol>`), `empty` (shown when there are no
 * messages), `render(transcript, pendingIds)` draws a transcript; `pendingIds` are the calls
 * waiting for approval (their result reads so until a person decides). `showLive(answer)` shows
 * the answer a model call is writing after the last message (null takes it away).
 */
export function createConversation() {
  let traceUrl = null;
  const list = h('ol', { id: 'conversation', class: 'conversation', 'aria-live': 'polite' });
  let live = null;
  let liveItem = null;
  let messageCount = 0;

  function showLive(answer) {
    live = answer;
    const item = answer ? liveAnswerItem(answer) : null;
    if (liveItem && item) liveItem.replaceWith(item);
    else if (liveItem) liveItem.remove();
    else if (item) list.append(item);
    liveItem = item;
    empty.hidden = messageCount > 0 || live !== null;
  }
  const empty = h('p', { class: 'empty', id: 'conversation-empty' }, 'No messages yet. Send one below: the agent plans with todo_write and works through its list.');
  const outcome = h('p', { class: 'turn-outcome', id: 'turn-outcome', hidden: true });

  function toolCall(call, results, pendingIds) {
    const name = call && call.function ? String(call.function.name) : '?';
    const result = results.get(call.id);
    const rejected = result !== undefined && isRejectedWrite(name, result);
    const item = h('li', { class: 'tool-call' + (rejected ? ' rejected' : ''), 'data-call-id': String(call.id), 'data-tool': name },
      h('div', { class: 'tool-head' },
        h('span', { class: 'tool-arrow', 'aria-hidden': 'true' }, '\u2192'),
        h('code', { class: 'tool-name' }, name),
        rejected ? h('span', { class: 'badge badge-rejected' }, 'Rejected') : null,
        h('span', { class: 'call-id muted' }, String(call.id)),
      ),
      toolArguments(name, call.function ? call.function.arguments : ''),
    );
    if (result !== undefined) {
      item.append(h('div', { class: 'tool-result' + (rejected ? ' tool-result-rejected' : '') },
        h('span', { class: 'sr-only' }, rejected ? 'Rejected result: ' : 'Result: '),
        h('span', { class: 'tool-arrow', 'aria-hidden': 'true' }, '\u2190'),
        h('pre', {}, cut(result)),
      ));
    } else {
      item.append(h('p', { class: 'tool-waiting muted' }, pendingIds.has(call.id) ? 'Waiting for a person to approve or deny this call.' : 'Running…'));
    }
    return item;
  }

  function render(transcript, pendingIds) {
    const messages = transcript && Array.isArray(transcript.messages) ? transcript.messages.filter((m) => m && typeof m === 'object') : [];
    const results = new Map();
    const calls = new Set();
    for (const m of messages) {
      if (m.role === 'tool') results.set(m.tool_call_id, typeof m.content === 'string' ? m.content : String(m.content));
      if (m.role === 'assistant') for (const call of m.tool_calls || []) calls.add(call.id);
    }
    const items = [];
    if (transcript && transcript.compacted) items.push(h('li', { class: 'msg msg-note' }, 'Older messages were dropped to fit the model\u2019s context; the plan is put back in front of the model.'));
    for (const m of messages) {
      if (m.role === 'user' && isNudge(m.content)) {
        items.push(h('li', { class: 'msg msg-note msg-nudge', 'data-role': 'nudge' }, h('span', { class: 'msg-role' }, 'Reminder from the loop'), h('p', { class: 'msg-text' }, m.content)));
      } else if (m.role === 'user') {
        items.push(h('li', { class: 'msg msg-user', 'data-role': 'user' }, h('span', { class: 'msg-role' }, 'You'), h('p', { class: 'msg-text' }, String(m.content))));
      } else if (m.role === 'assistant') {
        const toolCalls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
        const text = typeof m.content === 'string' && m.content.trim() !== '' ? m.content : null;
        const final = toolCalls.length === 0;
        items.push(h('li', { class: 'msg msg-assistant' + (final ? ' msg-answer' : ''), 'data-role': 'assistant' },
          h('span', { class: 'msg-role' }, 'Agent'),
          text !== null ? h('p', { class: 'msg-text' }, text) : null,
          toolCalls.length ? h('ol', { class: 'tool-calls' }, toolCalls.map((call) => toolCall(call, results, pendingIds))) : null,
        ));
      } else if (m.role === 'tool' && !calls.has(m.tool_call_id)) {
        // Its call was dropped from the context: the result alone.
        items.push(h('li', { class: 'msg msg-note', 'data-role': 'tool' }, `Result of call ${String(m.tool_call_id)}: `, h('pre', {}, cut(m.content))));
      } else if (m.role === 'system') {
        items.push(h('li', { class: 'msg msg-note', 'data-role': 'system' }, String(m.content)));
      }
    }
    list.replaceChildren(...items);
    messageCount = items.length;
    liveItem = null;
    showLive(live);
    const last = transcript ? transcript.lastTurn : null;
    outcome.hidden = !last;
    if (last) {
      outcome.replaceChildren(outcomeText(last), ...traceOf(last));
      outcome.className = 'turn-outcome' + (last.reason === 'completed' ? '' : ' turn-failed');
    }
  }

  /** The turn's trace: a link to the trace backend when the service names one, its id otherwise. */
  function traceOf(turn) {
    if (typeof turn.traceId !== 'string' || !TRACE_ID.test(turn.traceId)) return [];
    const href = traceHref(traceUrl, turn.traceId);
    const label = `trace ${turn.traceId.slice(0, 8)}\u2026`;
    const trace = href !== null
      ? h('a', { class: 'turn-trace', href, target: '_blank', rel: 'noopener noreferrer', title: `Open trace ${turn.traceId}` }, label)
      : h('code', { class: 'turn-trace muted', title: turn.traceId }, label);
    return [' \u00b7 ', trace];
  }

  /** Sets the trace URL template (`GET /dashboard-config`); the next render links to it. */
  function useTraceUrl(template) {
    traceUrl = typeof template === 'string' ? template : null;
  }

  return { element: list, empty, outcome, render, showLive, useTraceUrl };
}
