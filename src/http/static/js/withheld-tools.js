/* Tools the session withholds because their definitions changed after it first offered them
 * (`agent.withheldTools` of the session: a server that rewrote a trusted tool's description or
 * schema), each with why and an Accept button (`POST …/tools/accept`). */
import { api, sessionPath } from './api.js';
import { h } from './dom.js';

/**
 * The "Withheld tools" card of session `id`: `element`, hidden while nothing is withheld;
 * `render(snapshot)` lists them; `onAccepted()` runs after an accept went through.
 */
export function createWithheldTools(id, onAccepted) {
  const list = h('ul', { id: 'withheld-list', class: 'approvals-list' });
  const problem = h('p', { class: 'error-text', id: 'withheld-error', role: 'alert', hidden: true });
  const element = h('section', { class: 'card approvals-card', id: 'withheld-tools', 'aria-labelledby': 'withheld-title', hidden: true },
    h('div', { class: 'card-head' }, h('h2', { id: 'withheld-title' }, 'Withheld tools')),
    h('p', { class: 'muted approvals-intro' }, "These tools changed their description or schema after this session first offered them, so the model is not offered them. Accept one only once you trust what it says now."),
    list,
    problem,
  );
  let shown = '';

  async function accept(name, button) {
    button.disabled = true;
    problem.hidden = true;
    try {
      await api(sessionPath(id, '/tools/accept'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ names: [name] }) });
      onAccepted();
    } catch (error) {
      if (error.status === 401) return;
      problem.hidden = false;
      problem.textContent = `Could not accept ${name}: ${error.message}`;
      button.disabled = false;
    }
  }

  function render(snapshot) {
    const withheld = snapshot.agent && Array.isArray(snapshot.agent.withheldTools) ? snapshot.agent.withheldTools.filter((t) => t && typeof t === 'object') : [];
    element.hidden = withheld.length === 0;
    const key = JSON.stringify(withheld.map((t) => [t.name, t.offered]));
    if (key === shown) return;
    shown = key;
    list.replaceChildren(
      ...withheld.map((tool) => {
        const name = String(tool.name);
        const button = h('button', { type: 'button', class: 'button button-primary accept-tool' }, 'Accept');
        button.addEventListener('click', () => accept(name, button));
        return h('li', { class: 'approval withheld-tool', 'data-tool': name },
          h('div', { class: 'approval-head' }, h('code', { class: 'tool-name' }, name)),
          h('p', { class: 'muted' }, String(tool.reason)),
          h('div', { class: 'approval-row' }, button),
        );
      }),
    );
  }

  return { element, render };
}
