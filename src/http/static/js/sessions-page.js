/* The page `#/`: every session, newest first, refreshed every few seconds. */
/* global document, setTimeout, clearTimeout */
import { api } from './api.js';
import { errorBox, h } from './dom.js';
import { countsText, progressBar } from './progress.js';
import { sessionHref } from './routes.js';
import { statusBadge } from './status-badge.js';
import { formatAgo, timeEl } from './time.js';
import { setBreadcrumb, setConnection } from './top-bar.js';

const SESSIONS_REFRESH_MS = 3000;

/** Draws the sessions table into `main` and keeps it fresh until `stop()`. */
export function sessionsPage(main) {
  document.title = 'Sessions · agent-sessions';
  setBreadcrumb([]);
  setConnection('idle', `Refreshing every ${SESSIONS_REFRESH_MS / 1000} s`);
  const tbody = h('tbody');
  const table = h(
    'table',
    { id: 'sessions', class: 'sessions' },
    h('caption', { class: 'sr-only' }, 'Sessions, newest first'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Session'),
      h('th', { scope: 'col' }, 'Status'),
      h('th', { scope: 'col' }, 'Parent'),
      h('th', { scope: 'col', class: 'col-progress' }, 'Progress'),
      h('th', { scope: 'col', class: 'num' }, 'Version'),
      h('th', { scope: 'col' }, 'Updated'),
    )),
    tbody,
  );
  const meta = h('p', { class: 'muted', id: 'sessions-meta' }, 'Loading…');
  const problem = h('div');
  main.replaceChildren(
    h('section', { class: 'card', 'aria-labelledby': 'sessions-title' },
      h('div', { class: 'card-head' }, h('h1', { id: 'sessions-title' }, 'Sessions'), meta),
      problem,
      h('div', { class: 'table-wrap' }, table),
    ),
  );

  let stopped = false;
  let timer;
  async function refresh() {
    if (document.hidden) {
      timer = setTimeout(refresh, SESSIONS_REFRESH_MS);
      return;
    }
    try {
      const sessions = await api('/sessions');
      if (stopped) return;
      renderRows(tbody, sessions);
      const open = sessions.filter((s) => s.status === 'running').length;
      meta.textContent = `${sessions.length} sessions, ${open} running · updated ${new Date().toLocaleTimeString()}`;
      problem.replaceChildren();
    } catch (error) {
      if (stopped || error.status === 401) return;
      problem.replaceChildren(errorBox(`Could not load the sessions: ${error.message}`));
    }
    if (!stopped) timer = setTimeout(refresh, SESSIONS_REFRESH_MS);
  }
  void refresh();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

function renderRows(tbody, sessions) {
  if (sessions.length === 0) {
    tbody.replaceChildren(h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No sessions yet. Start one with `npx agent-sessions start demo`.')));
    return;
  }
  tbody.replaceChildren(
    ...sessions.map((s) =>
      h('tr', { 'data-id': s.id, 'data-status': s.status },
        h('td', {}, h('a', { href: sessionHref(s.id) }, idLabel(s.id, s.parent))),
        h('td', {}, statusBadge(s.status === 'closed')),
        h('td', {}, s.parent ? h('a', { href: sessionHref(s.parent), class: 'id' }, s.parent) : h('span', { class: 'muted' }, '—')),
        h('td', { class: 'col-progress' }, h('div', { class: 'progress-cell' }, progressBar(s.counts), h('span', { class: 'counts' }, countsText(s.counts)))),
        h('td', { class: 'num' }, s.version === null || s.version === undefined ? '—' : String(s.version)),
        h('td', {}, timeEl(s.updatedAt, formatAgo)),
      ),
    ),
  );
}

/** An id, with the parent's prefix dimmed for a subagent (`<parent>/<name>`). */
function idLabel(id, parent) {
  if (parent && id.startsWith(parent + '/')) {
    return h('span', { class: 'id' }, h('span', { class: 'id-prefix' }, parent + '/'), id.slice(parent.length + 1));
  }
  return h('span', { class: 'id' }, id);
}
