/* The page `#/sessions/<id>`: one session, live over its event stream, with its todo list, the
 * list's history, its subagents and the signals it ignored. */
/* global document, AbortController, setTimeout, clearTimeout */
import { api, sessionPath } from './api.js';
import { errorBox, h } from './dom.js';
import { followEvents } from './event-stream.js';
import { createIgnoredSignals } from './ignored-signals.js';
import { createSessionHead } from './session-head.js';
import { createSubagentTree } from './subagent-tree.js';
import { createTimeline } from './timeline.js';
import { createTodoList } from './todo-list.js';
import { setBreadcrumb, setConnection } from './top-bar.js';

const TREE_REFRESH_MS = 4000;

const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/** Draws session `id` into `main` and follows it until `stop()`. */
export function sessionPage(main, id) {
  document.title = `${id} · agent-sessions`;
  setBreadcrumb([{ label: id }]);
  setConnection('connecting', 'Connecting…');
  const controller = new AbortController();
  const { signal } = controller;
  let stopped = false;
  let live = null; // the latest snapshot from GET or the stream
  let treeTimer;

  /* layout */
  const head = createSessionHead(id);
  const problem = h('div', { id: 'problem' });
  const todoList = createTodoList();
  const timeline = createTimeline(id, {
    latest: () => live,
    showList: (todos, isLive) => todoList.render(todos, isLive),
    onViewChange: (lookingBack) => todosCard.classList.toggle('is-history', lookingBack),
  });
  const subagents = createSubagentTree(id);
  const ignored = createIgnoredSignals();
  const todosCard = h('section', { class: 'card todos-card', 'aria-labelledby': 'todos-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'todos-title' }, 'Todo list'), todoList.summary),
    todoList.bar,
    timeline.note,
    todoList.list,
    todoList.empty,
    timeline.controls,
  );
  const columns = h('div', { class: 'columns', id: 'columns', hidden: true }, todosCard, h('div', { class: 'side' }, subagents.element, ignored.element));
  main.replaceChildren(head.element, problem, columns);

  let lastTree = null;
  async function refreshTree() {
    clearTimeout(treeTimer);
    if (stopped) return;
    if (!document.hidden) {
      try {
        const tree = await api(sessionPath(id, '/tree'));
        if (stopped) return;
        lastTree = tree;
        subagents.draw(tree, live);
      } catch (error) {
        if (stopped || error.status === 401) return;
        subagents.draw(lastTree, live); // keep what the session snapshot says
      }
    }
    if (live) head.showUpdated(live);
    if (!stopped) treeTimer = setTimeout(refreshTree, TREE_REFRESH_MS);
  }

  function accept(snapshot) {
    if (!snapshot || typeof snapshot !== 'object') return;
    if (live && typeof snapshot.version === 'number' && snapshot.version < live.version) return; // stale
    const changed = !live || snapshot.version !== live.version;
    live = snapshot;
    problem.replaceChildren();
    head.render(snapshot);
    ignored.render(snapshot.ignoredSignals);
    columns.hidden = false;
    if (timeline.isLive()) {
      todoList.render(snapshot.todos, true);
      if (changed) timeline.schedule(150);
    } else if (changed) {
      timeline.noteNews();
    }
    timeline.render();
    if (!lastTree) subagents.draw(null, live);
    if (changed && todoList.hasDrawn()) void refreshTree();
  }

  /* data */
  api(sessionPath(id))
    .then((snapshot) => !stopped && accept(snapshot))
    .catch((error) => {
      if (stopped || error.status === 401) return;
      problem.replaceChildren(errorBox(error.status === 404 ? capitalize(error.message) : `Could not load the session: ${error.message}`));
    });
  void refreshTree();
  void followEvents(sessionPath(id, '/events'), signal, {
    onOpen: () => setConnection('live', 'Live'),
    onEvent: (message) => {
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return; // a malformed event: wait for the next one
      }
      if (message.event === 'session') accept(data);
      else if (message.event === 'problem' && data && typeof data.error === 'string') {
        problem.replaceChildren(errorBox(`The server could not read the session: ${data.error}`));
      }
    },
    onError: (error) => {
      if (error && error.status === 404) problem.replaceChildren(errorBox(capitalize(error.message)));
    },
    onRetry: (ms) => setConnection('reconnecting', `Reconnecting in ${Math.ceil(ms / 1000)} s…`),
  });

  return {
    stop() {
      stopped = true;
      controller.abort();
      clearTimeout(treeTimer);
      timeline.stop();
    },
  };
}
