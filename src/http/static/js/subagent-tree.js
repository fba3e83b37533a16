/* A session's subagents, recursively, each with its status, task, progress and what it is working
 * on; a subagent's whole list is fetched only when it is expanded. */
import { api, sessionPath } from './api.js';
import { h } from './dom.js';
import { countsText, progressBar } from './progress.js';
import { sessionHref } from './routes.js';

const STATUS = {
  pending: { label: 'Pending', mark: '' },
  in_progress: { label: 'In progress', mark: '' },
  completed: { label: 'Completed', mark: '\u2713' },
};

/**
 * The "Subagents" card of session `id`. `draw(tree, live)` shows `tree` (the
 * `GET /sessions/{id}/tree` answer: each subagent summarized from its search attributes) or,
 * when it is null, the direct children of the `live` snapshot; names, tasks and counts missing
 * from the tree come from the snapshot. "Show todos" on a subagent fetches its list
 * (`GET /sessions/{child}/todos`), again whenever the tree shows its version moved.
 * `onMore` is called by "Show more subagents", shown while the tree has a `nextPageToken`.
 */
export function createSubagentTree(id, { onMore } = {}) {
  const children = h('ul', { id: 'children', class: 'tree' });
  const childrenEmpty = h('p', { class: 'empty', id: 'children-empty' }, 'No subagents.');
  const childrenSummary = h('span', { class: 'summary', id: 'children-summary' });
  const more = h('button', { class: 'button children-more', id: 'children-more', type: 'button', hidden: true, onclick: () => onMore && onMore() }, 'Show more subagents');
  const element = h('section', { class: 'card children-card', 'aria-labelledby': 'children-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'children-title' }, 'Subagents'), childrenSummary),
    children,
    childrenEmpty,
    more,
  );
  /** Expanded subagents by id: the version their list was fetched at, the list, a fetch under way, its error. */
  const expanded = new Map();
  let drawn = [null, null];

  function draw(tree, live) {
    drawn = [tree, live];
    const infoById = new Map((live ? live.children : []).map((c) => [c.sessionId, c]));
    const root = tree || { id, children: (live ? live.children : []).map((c) => ({ id: c.sessionId, name: c.name, closed: c.closed, counts: c.counts, children: [] })) };
    const list = renderTree(root, infoById, { expanded, toggle, load });
    children.replaceChildren(...list.children);
    childrenEmpty.hidden = children.childElementCount > 0;
    more.hidden = !(tree && tree.nextPageToken);
    const direct = live ? live.children : [];
    const closedCount = direct.filter((c) => c.closed).length;
    childrenSummary.textContent = direct.length ? `${direct.length - closedCount} running · ${closedCount} closed` : '';
  }

  const redraw = () => draw(...drawn);

  function toggle(child) {
    if (expanded.has(child.id)) expanded.delete(child.id);
    else expanded.set(child.id, { version: undefined, todos: undefined, loading: false, error: null });
    redraw();
  }

  /** Fetches the list of an expanded subagent whose list is missing or older than `version`. */
  function load(childId, version) {
    const entry = expanded.get(childId);
    if (!entry || entry.loading || (entry.version === version && (entry.todos !== undefined || entry.error))) return;
    entry.loading = true;
    api(sessionPath(childId, '/todos'))
      .then((todos) => {
        entry.todos = todos;
        entry.version = version;
        entry.error = null;
      })
      .catch((error) => {
        entry.error = error.message;
        entry.version = version;
      })
      .finally(() => {
        entry.loading = false;
        if (expanded.get(childId) === entry) redraw();
      });
  }

  return { element, draw };
}

function renderTree(node, infoById, parts) {
  const items = (node.children || []).map((child) => {
    const info = infoById.get(child.id) || {};
    const closed = child.closed !== undefined ? child.closed : info.closed;
    const name = child.name || info.name || child.id.slice(node.id.length + 1) || child.id;
    const counts = child.counts || info.counts || null;
    const sub = renderTree(child, infoById, parts);
    const task = info.task;
    const entry = parts.expanded.get(child.id);
    if (entry) parts.load(child.id, child.version);
    const working = Array.isArray(child.inProgressContent) ? child.inProgressContent : [];
    const listId = `todos-of-${child.id}`;
    return h('li', { class: 'child', 'data-id': child.id },
      h('div', { class: 'child-row' },
        h('a', { href: sessionHref(child.id), class: 'child-name' }, name),
        closed ? h('span', { class: 'badge badge-closed badge-small' }, 'Closed') : null,
        h('span', { class: 'counts' }, countsText(counts)),
      ),
      task ? h('p', { class: 'child-task' }, task) : null,
      progressBar(counts),
      entry ? null : working.map((content) => h('p', { class: 'child-working' }, h('span', { class: 'sr-only' }, 'In progress: '), content)),
      h('button', {
        class: 'child-expand',
        type: 'button',
        'aria-expanded': entry ? 'true' : 'false',
        'aria-controls': entry ? listId : null,
        onclick: () => parts.toggle(child),
      }, entry ? 'Hide todos' : 'Show todos'),
      entry ? childList(entry, listId) : null,
      sub.childElementCount ? sub : null,
    );
  });
  return h('ul', { class: 'tree' }, items);
}

/** An expanded subagent's list: its items, or why there are none yet. */
function childList(entry, listId) {
  if (entry.error) return h('p', { class: 'error child-todos-note', id: listId }, `Could not load its todos: ${entry.error}`);
  if (entry.todos === undefined) return h('p', { class: 'empty child-todos-note', id: listId }, 'Loading its todos…');
  if (entry.todos === null || entry.todos.length === 0) {
    return h('p', { class: 'empty child-todos-note', id: listId }, entry.todos === null ? 'No plan yet in this turn.' : 'The list is empty.');
  }
  return h('ul', { class: 'todos child-todos', id: listId },
    entry.todos.map((todo) => {
      const known = STATUS[todo.status] || { label: String(todo.status), mark: '?' };
      return h('li', { class: 'todo', 'data-status': todo.status },
        h('span', { class: 'mark', 'aria-hidden': 'true' }, known.mark),
        h('span', { class: 'sr-only status-label' }, known.label + ': '),
        h('span', { class: 'content' }, todo.content),
      );
    }),
  );
}
