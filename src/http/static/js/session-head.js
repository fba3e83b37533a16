/* The top of a session page: its id and status, its task, and the facts (turn, version, parent,
 * last update), plus the breadcrumb trail through its parent. */
import { h } from './dom.js';
import { sessionHref } from './routes.js';
import { statusBadge } from './status-badge.js';
import { formatAgo, timeEl } from './time.js';
import { setBreadcrumb } from './top-bar.js';

/**
 * The head of session `id`: `element`; `render(snapshot)` shows a `GET /sessions/{id}` answer;
 * `showUpdated(snapshot)` refreshes only its "Updated … ago".
 */
export function createSessionHead(id) {
  const title = h('h1', { class: 'session-id' }, id);
  const badge = h('span', { id: 'closed' });
  const task = h('p', { class: 'task', id: 'task', hidden: true });
  const turn = h('dd', { id: 'turn' }, '—');
  const version = h('dd', { id: 'version' }, '—');
  const parent = h('dd', { id: 'parent' }, '—');
  const updated = h('dd', { id: 'updated' }, '—');
  const facts = h('dl', { class: 'facts', id: 'facts', hidden: true },
    h('div', {}, h('dt', {}, 'Turn'), turn),
    h('div', {}, h('dt', {}, 'Version'), version),
    h('div', {}, h('dt', {}, 'Parent'), parent),
    h('div', {}, h('dt', {}, 'Updated'), updated),
  );
  const element = h('section', { class: 'session-head', 'aria-labelledby': 'session-title' },
    h('div', { class: 'title-row', id: 'session-title' }, title, badge),
    task,
    facts,
  );

  function showUpdated(snapshot) {
    updated.replaceChildren(timeEl(snapshot.updatedAt, formatAgo));
  }

  function render(snapshot) {
    facts.hidden = false;
    badge.replaceChildren(statusBadge(snapshot.closed));
    if (snapshot.task) {
      task.hidden = false;
      task.replaceChildren(h('span', { class: 'task-label' }, 'Task'), ' ', snapshot.task);
    } else task.hidden = true;
    turn.textContent = snapshot.turn > 0 ? `${snapshot.turn} · ${snapshot.turnOpen ? 'open' : 'ended'}` : 'not started';
    turn.className = snapshot.turnOpen ? 'turn-open' : 'turn-ended';
    version.textContent = String(snapshot.version);
    if (snapshot.parent) {
      parent.replaceChildren(h('a', { href: sessionHref(snapshot.parent.sessionId), class: 'id' }, snapshot.parent.sessionId));
      setBreadcrumb([{ label: snapshot.parent.sessionId, href: sessionHref(snapshot.parent.sessionId) }, { label: snapshot.parent.name || id }]);
    } else {
      parent.replaceChildren(h('span', { class: 'muted' }, 'none (top level)'));
      setBreadcrumb([{ label: id }]);
    }
    showUpdated(snapshot);
  }

  return { element, render, showUpdated };
}
