/* A session's subagents, recursively, each with its status, task and progress. */
import { h } from './dom.js';
import { countsText, progressBar } from './progress.js';
import { sessionHref } from './routes.js';

/**
 * The "Subagents" card of session `id`. `draw(tree, live)` shows `tree` (the
 * `GET /sessions/{id}/tree` answer) or, when it is null, the direct children of the `live`
 * snapshot; names, tasks and counts missing from the tree come from the snapshot.
 */
export function createSubagentTree(id) {
  const children = h('ul', { id: 'children', class: 'tree' });
  const childrenEmpty = h('p', { class: 'empty', id: 'children-empty' }, 'No subagents.');
  const childrenSummary = h('span', { class: 'summary', id: 'children-summary' });
  const element = h('section', { class: 'card children-card', 'aria-labelledby': 'children-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'children-title' }, 'Subagents'), childrenSummary),
    children,
    childrenEmpty,
  );

  function draw(tree, live) {
    const infoById = new Map((live ? live.children : []).map((c) => [c.sessionId, c]));
    const root = tree || { id, children: (live ? live.children : []).map((c) => ({ id: c.sessionId, name: c.name, closed: c.closed, counts: c.counts, children: [] })) };
    const drawn = renderTree(root, infoById);
    children.replaceChildren(...drawn.children);
    childrenEmpty.hidden = children.childElementCount > 0;
    const direct = live ? live.children : [];
    const closedCount = direct.filter((c) => c.closed).length;
    childrenSummary.textContent = direct.length ? `${direct.length - closedCount} running · ${closedCount} closed` : '';
  }

  return { element, draw };
}

function renderTree(node, infoById) {
  const items = (node.children || []).map((child) => {
    const info = infoById.get(child.id) || {};
    const closed = child.closed !== undefined ? child.closed : info.closed;
    const name = child.name || info.name || child.id.slice(node.id.length + 1) || child.id;
    const counts = child.counts || info.counts || null;
    const sub = renderTree(child, infoById);
    const task = info.task;
    return h('li', { class: 'child', 'data-id': child.id },
      h('div', { class: 'child-row' },
        h('a', { href: sessionHref(child.id), class: 'child-name' }, name),
        closed ? h('span', { class: 'badge badge-closed badge-small' }, 'Closed') : null,
        h('span', { class: 'counts' }, countsText(counts)),
      ),
      task ? h('p', { class: 'child-task' }, task) : null,
      progressBar(counts),
      sub.childElementCount ? sub : null,
    );
  });
  return h('ul', { class: 'tree' }, items);
}
