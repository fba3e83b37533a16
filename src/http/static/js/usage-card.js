/* What a session's model calls cost (`GET /sessions/{id}/usage`): tokens, calls, and the
 * characters the model spent rewriting its todo list, for the session and with its subagents. */
import { h } from './dom.js';

const n = (value) => (typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US') : '—');

/**
 * The "Usage" card: `element`; `render(usage)` shows `{ session, tree }`: the session's own
 * model calls, and the same summed over every subagent below it (a delegated agent's tokens are
 * counted, not lost).
 */
export function createUsageCard() {
  const body = h('tbody', {});
  const element = h('section', { class: 'card usage-card', id: 'usage', 'aria-labelledby': 'usage-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'usage-title' }, 'Usage')),
    h('table', { class: 'usage' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, ''), h('th', { scope: 'col', class: 'num' }, 'Session'), h('th', { scope: 'col', class: 'num' }, 'With subagents'))),
      body,
    ),
  );

  function render(usage) {
    const session = usage && usage.session ? usage.session : {};
    const tree = usage && usage.tree ? usage.tree : {};
    const rows = [
      ['Tokens', 'total_tokens', (u) => `${n(u.total_tokens)}`],
      ['Prompt / completion', 'prompt_tokens', (u) => `${n(u.prompt_tokens)} / ${n(u.completion_tokens)}`],
      ['Model calls', 'model_calls', (u) => n(u.model_calls)],
      ['Output chars', 'output_chars', (u) => n(u.output_chars)],
      ['of them todo_write', 'todo_write_chars', (u) => n(u.todo_write_chars)],
    ];
    body.replaceChildren(
      ...rows.map(([label, field, show]) =>
        h('tr', { 'data-field': field },
          h('th', { scope: 'row' }, label),
          h('td', { class: 'num usage-session' }, show(session)),
          h('td', { class: 'num usage-tree' }, show(tree)),
        ),
      ),
    );
  }

  render(null);
  return { element, render };
}
