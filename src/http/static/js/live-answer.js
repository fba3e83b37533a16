/* The answer a model call is writing, as `GET /sessions/{id}/stream` brings its words: shown at
 * the end of the conversation while it grows, and replaced by the durable message (from the
 * transcript) once the call's answer is recorded. The words are the model's: text only. */
import { h } from './dom.js';

/** Longest text shown of one growing answer; the durable message shows the rest. */
const LIVE_CHARS = 20000;

/**
 * The answer after `event` (`src/session/model-stream.ts` does the same for the CLI): `start`
 * and `reset` begin an answer (a reset drops what an earlier attempt wrote), `text`, `tool` and
 * `arguments` add to the answer of their call and attempt, `end` says how it ended. Events of
 * another call or attempt, or malformed ones, change nothing.
 */
export function applyStreamEvent(current, event) {
  if (!event || typeof event !== 'object' || typeof event.call !== 'string' || !Number.isInteger(event.attempt)) return current;
  const sameCall = current !== null && current.call === event.call;
  if (event.type === 'start' || event.type === 'reset') {
    if (sameCall && event.attempt < current.attempt) return current; // a late reset of an attempt already superseded
    return { call: event.call, attempt: event.attempt, text: '', tools: [], outcome: null };
  }
  if (!sameCall || current.attempt !== event.attempt || current.outcome) return current;
  if (event.type === 'text' && typeof event.text === 'string') return { ...current, text: current.text + event.text };
  if (event.type === 'tool' && typeof event.name === 'string' && Number.isInteger(event.index)) {
    if (current.tools.some((tool) => tool.index === event.index)) return current;
    return { ...current, tools: [...current.tools, { index: event.index, name: event.name, args: '' }] };
  }
  if (event.type === 'arguments' && typeof event.text === 'string') {
    return { ...current, tools: current.tools.map((tool) => (tool.index === event.index ? { ...tool, args: tool.args + event.text } : tool)) };
  }
  if (event.type === 'end' && typeof event.outcome === 'string') return { ...current, outcome: event.outcome };
  return current;
}

/**
 * Whether the transcript now holds the answer as recorded: its last assistant message says the
 * same text and makes the same tool calls (names and arguments). Then the growing answer gives
 * way to it.
 */
export function recorded(answer, transcript) {
  const messages = transcript && Array.isArray(transcript.messages) ? transcript.messages : [];
  let last = null;
  for (let i = messages.length - 1; i >= 0 && last === null; i--) if (messages[i] && messages[i].role === 'assistant') last = messages[i];
  if (last === null) return false;
  const text = typeof last.content === 'string' ? last.content : '';
  const calls = Array.isArray(last.tool_calls) ? last.tool_calls : [];
  if (text !== answer.text || calls.length !== answer.tools.length) return false;
  const tools = [...answer.tools].sort((a, b) => a.index - b.index);
  return calls.every((call, k) => call && call.function && call.function.name === tools[k].name && call.function.arguments === tools[k].args);
}

/** The growing answer's list item: its text so far, and each tool call the model began with its arguments so far. */
export function liveAnswerItem(answer) {
  const text = answer.text.length > LIVE_CHARS ? `${answer.text.slice(0, LIVE_CHARS)}…` : answer.text;
  return h('li', { class: 'msg msg-live', 'data-role': 'assistant-live', 'aria-busy': 'true' },
    h('span', { class: 'msg-role' }, 'Agent', h('span', { class: 'live-mark muted' }, ' is writing…')),
    text !== '' ? h('p', { class: 'msg-text' }, text) : null,
    answer.tools.length > 0
      ? h('ol', { class: 'live-tools' }, answer.tools.map((tool) => h('li', { class: 'live-tool', 'data-tool': tool.name },
        h('div', { class: 'tool-head' }, h('span', { class: 'tool-arrow', 'aria-hidden': 'true' }, '\u2192'), h('code', { class: 'tool-name' }, tool.name)),
        tool.args !== '' ? h('pre', { class: 'tool-args' }, tool.args) : null,
      )))
      : null,
  );
}
