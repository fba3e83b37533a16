/* The agent-sessions live dashboard: plain JavaScript, no framework, no build step.
 *
 * Every piece of data (ids, todo contents, task texts, error messages) is untrusted text: the
 * DOM is built with createElement and textContent only, never with HTML strings.
 *
 * Pages (hash routes): `#/` lists the sessions; `#/sessions/<encoded id>` shows one session
 * live, over the Server-Sent Events stream `GET /sessions/{id}/events`, read with fetch() so the
 * bearer token can be sent (EventSource cannot send headers).
 */
/* global document, window, location, sessionStorage, fetch, TextDecoder, AbortController, setTimeout, clearTimeout, Node */
'use strict';

(() => {
  const TOKEN_KEY = 'agent-sessions.token';
  const SESSIONS_REFRESH_MS = 3000;
  const TREE_REFRESH_MS = 4000;
  const TIMELINE_MIN_GAP_MS = 1000;
  const RECONNECT_MIN_MS = 500;
  const RECONNECT_MAX_MS = 15000;

  const STATUS = {
    pending: { label: 'Pending', mark: '' },
    in_progress: { label: 'In progress', mark: '' },
    completed: { label: 'Completed', mark: '\u2713' },
  };

  const main = document.getElementById('main');
  const breadcrumb = document.getElementById('breadcrumb');
  const connection = document.getElementById('connection');

  /* ---------------------------------------------------------------- DOM helpers */

  /** Creates an element; strings and numbers among the children become text nodes. */
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === 'class') el.className = value;
      else if (key === 'text') el.textContent = String(value);
      else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : String(child));
    }
    return el;
  }

  const sessionHref = (id) => '#/sessions/' + encodeURIComponent(id);
  const sessionPath = (id, suffix) => '/sessions/' + encodeURIComponent(id) + (suffix || '');

  function countTodos(todos) {
    const counts = { pending: 0, in_progress: 0, completed: 0 };
    for (const todo of todos || []) if (todo.status in counts) counts[todo.status] += 1;
    return counts;
  }

  /** A segmented progress bar: completed, then in progress, over the whole list. */
  function progressBar(counts, extraClass) {
    const total = counts ? counts.pending + counts.in_progress + counts.completed : 0;
    const bar = h('div', { class: 'bar' + (extraClass ? ' ' + extraClass : ''), role: 'img' });
    const done = h('span', { class: 'bar-completed' });
    const active = h('span', { class: 'bar-in-progress' });
    bar.append(done, active);
    if (!counts) {
      bar.classList.add('bar-unknown');
      bar.setAttribute('aria-label', 'progress unknown');
    } else {
      // CSSOM writes are allowed under a style-src 'self' policy (unlike style attributes).
      done.style.width = total ? (100 * counts.completed) / total + '%' : '0';
      active.style.width = total ? (100 * counts.in_progress) / total + '%' : '0';
      bar.setAttribute('aria-label', `${counts.completed} of ${total} completed, ${counts.in_progress} in progress`);
    }
    return bar;
  }

  function countsText(counts) {
    if (!counts) return 'no answer';
    const total = counts.pending + counts.in_progress + counts.completed;
    if (total === 0) return 'empty list';
    const parts = [`${counts.completed}/${total} done`];
    if (counts.in_progress) parts.push(`${counts.in_progress} in progress`);
    return parts.join(' · ');
  }

  function formatAgo(iso) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return '—';
    const s = Math.round((Date.now() - t) / 1000);
    if (s < 5) return 'just now';
    if (s < 60) return `${s} s ago`;
    const m = Math.round(s / 60);
    if (m < 60) return `${m} min ago`;
    const hours = Math.round(m / 60);
    if (hours < 48) return `${hours} h ago`;
    return new Date(t).toLocaleDateString();
  }

  function timeEl(iso, format) {
    const t = Date.parse(iso);
    if (!Number.isFinite(t)) return h('span', { class: 'muted' }, '—');
    return h('time', { datetime: new Date(t).toISOString(), title: new Date(t).toLocaleString() }, format(iso));
  }

  const clockTime = (iso) => new Date(Date.parse(iso)).toLocaleTimeString();

  function statusBadge(closed) {
    return closed
      ? h('span', { class: 'badge badge-closed' }, 'Closed')
      : h('span', { class: 'badge badge-running' }, 'Running');
  }

  /** An id, with the parent's prefix dimmed for a subagent (`<parent>/<name>`). */
  function idLabel(id, parent) {
    if (parent && id.startsWith(parent + '/')) {
      return h('span', { class: 'id' }, h('span', { class: 'id-prefix' }, parent + '/'), id.slice(parent.length + 1));
    }
    return h('span', { class: 'id' }, id);
  }

  function setBreadcrumb(items) {
    breadcrumb.replaceChildren();
    const all = [{ label: 'Sessions', href: '#/' }, ...items];
    all.forEach((item, i) => {
      if (i > 0) breadcrumb.append(h('span', { class: 'crumb-sep', 'aria-hidden': 'true' }, '/'));
      const last = i === all.length - 1;
      breadcrumb.append(
        last ? h('span', { class: 'crumb', 'aria-current': 'page' }, item.label) : h('a', { class: 'crumb', href: item.href }, item.label),
      );
    });
  }

  function setConnection(state, text) {
    connection.className = 'connection connection-' + state;
    connection.textContent = text;
  }

  const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  function errorBox(message) {
    return h('p', { class: 'error', role: 'alert' }, message);
  }

  /* ---------------------------------------------------------------- HTTP */

  class HttpError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  function authHeaders() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? { Authorization: 'Bearer ' + token } : {};
  }

  async function errorFrom(response) {
    let message = `${response.status} ${response.statusText}`.trim();
    try {
      const body = await response.json();
      if (body && typeof body.error === 'string') message = body.error;
    } catch {
      // not JSON: keep the status line
    }
    return new HttpError(response.status, message);
  }

  async function api(path, init) {
    const options = init || {};
    const response = await fetch(path, {
      ...options,
      cache: 'no-store',
      headers: { Accept: 'application/json', ...authHeaders(), ...(options.headers || {}) },
    });
    if (response.status === 401) {
      askForToken();
      throw new HttpError(401, 'This server needs an access token.');
    }
    if (!response.ok) throw await errorFrom(response);
    return response.status === 204 ? null : response.json();
  }

  /** Whether the stored token (or none) is accepted: GET /auth answers 204 or 401. */
  async function tokenAccepted() {
    try {
      const response = await fetch('/auth', { headers: authHeaders(), cache: 'no-store' });
      return response.status !== 401;
    } catch {
      return true; // unreachable server: let the page say so
    }
  }

  /**
   * Reads `GET /sessions/{id}/events` with fetch, parsing `event:`/`id:`/`data:` lines, and
   * reconnects with exponential backoff whenever the stream ends or fails, until `signal` aborts.
   */
  async function followEvents(path, signal, handlers) {
    let delay = RECONNECT_MIN_MS;
    while (!signal.aborted) {
      try {
        const response = await fetch(path, {
          headers: { Accept: 'text/event-stream', ...authHeaders() },
          cache: 'no-store',
          signal,
        });
        if (response.status === 401) {
          askForToken();
          return;
        }
        if (!response.ok || !response.body) throw await errorFrom(response);
        handlers.onOpen();
        delay = RECONNECT_MIN_MS;
        await readEventStream(response.body, handlers.onEvent);
      } catch (error) {
        if (signal.aborted) return;
        handlers.onError(error);
      }
      if (signal.aborted) return;
      handlers.onRetry(delay);
      await sleep(delay, signal);
      delay = Math.min(delay * 2, RECONNECT_MAX_MS);
    }
  }

  async function readEventStream(body, onEvent) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let event = '';
    let id = null;
    let data = [];
    const line = (text) => {
      if (text === '') {
        if (data.length > 0) onEvent({ event: event || 'message', id, data: data.join('\n') });
        event = '';
        data = [];
        return;
      }
      if (text.startsWith(':')) return; // comment / keep-alive
      const colon = text.indexOf(':');
      const field = colon === -1 ? text : text.slice(0, colon);
      let value = colon === -1 ? '' : text.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      // Hold back a trailing CR: it may be the first half of a CRLF.
      const hold = buffer.endsWith('\r') ? 1 : 0;
      const lines = buffer.slice(0, buffer.length - hold).split(/\r\n|\r|\n/);
      buffer = lines.pop() + buffer.slice(buffer.length - hold);
      lines.forEach(line);
    }
  }

  function sleep(ms, signal) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  /* ---------------------------------------------------------------- token gate */

  let page = null; // the current page: { stop() }
  let gated = false;

  function askForToken(rejected) {
    if (gated && !rejected) return;
    gated = true;
    if (page) page.stop();
    page = null;
    setBreadcrumb([]);
    setConnection('idle', '');
    const input = h('input', { id: 'token-input', name: 'token', type: 'password', autocomplete: 'current-password', required: true, spellcheck: 'false' });
    const problem = h('p', { id: 'token-error', class: 'error', role: 'alert' });
    if (rejected) problem.textContent = 'That token was not accepted. Check it and try again.';
    else problem.hidden = true;
    const submit = h('button', { type: 'submit', class: 'button button-primary' }, 'Continue');
    const form = h(
      'form',
      { id: 'token-form', class: 'card token-form', 'aria-labelledby': 'token-title' },
      h('h1', { id: 'token-title' }, 'Access token required'),
      h('p', { class: 'muted' }, 'This server asks for a bearer token. It is kept in this browser tab only (session storage).'),
      h('label', { for: 'token-input' }, 'Token'),
      h('div', { class: 'token-row' }, input, submit),
      problem,
    );
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const token = input.value.trim();
      if (!token) return;
      submit.disabled = true;
      sessionStorage.setItem(TOKEN_KEY, token);
      let ok = false;
      try {
        ok = await tokenAccepted();
      } catch {
        ok = false; // e.g. characters a header cannot carry
      }
      submit.disabled = false;
      if (!ok) {
        sessionStorage.removeItem(TOKEN_KEY);
        askForToken(true);
        return;
      }
      gated = false;
      route();
    });
    main.replaceChildren(form);
    input.focus();
  }

  /* ---------------------------------------------------------------- sessions page */

  function sessionsPage() {
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

  /* ---------------------------------------------------------------- session page */

  function sessionPage(id) {
    document.title = `${id} · agent-sessions`;
    setBreadcrumb([{ label: id }]);
    setConnection('connecting', 'Connecting…');
    const controller = new AbortController();
    const { signal } = controller;
    let stopped = false;
    let live = null; // the latest snapshot from GET or the stream
    let steps = []; // the timeline
    let viewing = null; // index of the timeline step shown, or null when live
    let newsWhileAway = false;
    let treeTimer;
    let timelineTimer;
    let rendered = false; // whether the list has been drawn once (no flash on first draw)

    /* layout */
    const title = h('h1', { class: 'session-id' }, id);
    const badge = h('span', { id: 'closed' });
    const task = h('p', { class: 'task', id: 'task', hidden: true });
    const turn = h('dd', { id: 'turn' }, '—');
    const version = h('dd', { id: 'version' }, '—');
    const parent = h('dd', { id: 'parent' }, '—');
    const updated = h('dd', { id: 'updated' }, '—');
    const problem = h('div', { id: 'problem' });
    const summary = h('span', { class: 'summary', id: 'summary' });
    const barSlot = h('div', { class: 'bar-slot' });
    const historyNote = h('p', { class: 'history-note', id: 'history-note', hidden: true });
    const list = h('ul', { id: 'todos', class: 'todos', 'aria-live': 'polite', 'aria-labelledby': 'todos-title' });
    const empty = h('p', { class: 'empty', id: 'todos-empty', hidden: true });
    const slider = h('input', { id: 'history-slider', type: 'range', min: 0, max: 0, value: 0, step: 1, disabled: true, 'aria-describedby': 'history-step' });
    const stepText = h('output', { id: 'history-step', for: 'history-slider', class: 'history-step' });
    const liveButton = h('button', { type: 'button', id: 'history-live', class: 'button', disabled: true }, 'Live');
    const children = h('ul', { id: 'children', class: 'tree' });
    const childrenEmpty = h('p', { class: 'empty', id: 'children-empty' }, 'No subagents.');
    const childrenSummary = h('span', { class: 'summary', id: 'children-summary' });
    const todosCard = h('section', { class: 'card todos-card', 'aria-labelledby': 'todos-title' },
      h('div', { class: 'card-head' }, h('h2', { id: 'todos-title' }, 'Todo list'), summary),
      barSlot,
      historyNote,
      list,
      empty,
      h('div', { class: 'history' },
        h('div', { class: 'history-row' },
          h('label', { for: 'history-slider' }, 'History'),
          slider,
          liveButton,
        ),
        stepText,
      ),
    );

    main.replaceChildren(
      h('section', { class: 'session-head', 'aria-labelledby': 'session-title' },
        h('div', { class: 'title-row', id: 'session-title' }, title, badge),
        task,
        h('dl', { class: 'facts', id: 'facts', hidden: true },
          h('div', {}, h('dt', {}, 'Turn'), turn),
          h('div', {}, h('dt', {}, 'Version'), version),
          h('div', {}, h('dt', {}, 'Parent'), parent),
          h('div', {}, h('dt', {}, 'Updated'), updated),
        ),
      ),
      problem,
      h('div', { class: 'columns', id: 'columns', hidden: true },
        todosCard,
        h('section', { class: 'card children-card', 'aria-labelledby': 'children-title' },
          h('div', { class: 'card-head' }, h('h2', { id: 'children-title' }, 'Subagents'), childrenSummary),
          children,
          childrenEmpty,
        ),
      ),
    );

    /* rendering */
    function renderHead(snapshot) {
      document.getElementById('facts').hidden = false;
      document.getElementById('columns').hidden = false;
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
      updated.replaceChildren(timeEl(snapshot.updatedAt, formatAgo));
    }

    function renderList(todos) {
      const counts = countTodos(todos);
      const total = counts.pending + counts.in_progress + counts.completed;
      summary.textContent = todos === null ? 'no plan' : countsText(counts);
      barSlot.replaceChildren(progressBar(todos === null ? null : counts, 'bar-large'));
      // Contents are unique within a list, so they key the items: unchanged items keep their
      // element and changed ones flash once.
      const old = new Map();
      for (const li of list.children) old.set(li.querySelector('.content').textContent, li);
      const items = (todos || []).map((todo) => {
        let li = old.get(todo.content);
        const fresh = !li;
        if (fresh) {
          li = h('li', { class: 'todo' },
            h('span', { class: 'mark', 'aria-hidden': 'true' }),
            h('span', { class: 'sr-only status-label' }),
            h('span', { class: 'content' }, todo.content),
          );
        }
        if (li.dataset.status !== todo.status) {
          const known = STATUS[todo.status] || { label: String(todo.status), mark: '?' };
          li.dataset.status = todo.status;
          li.querySelector('.mark').textContent = known.mark;
          li.querySelector('.status-label').textContent = known.label + ': ';
          if (rendered && viewing === null) flash(li);
        }
        return li;
      });
      list.replaceChildren(...items);
      empty.hidden = total > 0;
      empty.textContent = todos === null ? 'No plan yet in this turn.' : 'The list is empty.';
      rendered = true;
    }

    function flash(li) {
      li.classList.remove('changed');
      void li.offsetWidth; // restart the animation
      li.classList.add('changed');
    }

    function renderHistoryControls() {
      const last = steps.length - 1;
      slider.max = String(Math.max(last, 0));
      slider.disabled = steps.length === 0;
      slider.value = String(viewing === null ? Math.max(last, 0) : viewing);
      liveButton.disabled = viewing === null;
      liveButton.classList.toggle('has-news', newsWhileAway);
      liveButton.textContent = newsWhileAway ? 'Live (new changes)' : 'Live';
      todosCard.classList.toggle('is-history', viewing !== null);
      if (viewing === null) {
        historyNote.hidden = true;
        stepText.replaceChildren(
          h('span', { class: 'chip chip-live' }, 'live'),
          ' ',
          steps.length ? `${steps.length} events in the history · drag to look back` : 'no history yet',
        );
        return;
      }
      const step = steps[viewing];
      historyNote.hidden = false;
      historyNote.textContent = `Showing the list as it was after event ${viewing + 1} of ${steps.length}.`;
      stepText.replaceChildren(
        h('span', { class: 'chip' }, step.type),
        ' ',
        `step ${viewing + 1} of ${steps.length} · `,
        step.time ? timeEl(step.time, clockTime) : 'time unknown',
        ` · version ${step.version} · turn ${step.turn}${step.turnOpen ? ' (open)' : ''}`,
      );
    }

    function showLive() {
      viewing = null;
      newsWhileAway = false;
      if (live) renderList(live.todos);
      renderHistoryControls();
    }

    function showStep(index) {
      viewing = index;
      renderList(steps[index].todos);
      renderHistoryControls();
    }

    slider.addEventListener('input', () => {
      if (steps.length === 0) return;
      const index = Number(slider.value);
      // The newest step is the live state only when the timeline is current.
      if (index === steps.length - 1 && live && steps[index].version === live.version) showLive();
      else showStep(index);
    });
    liveButton.addEventListener('click', () => {
      showLive();
      scheduleTimeline(0);
    });

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

    function drawChildren(tree) {
      const infoById = new Map((live ? live.children : []).map((c) => [c.sessionId, c]));
      const root = tree || { id, children: (live ? live.children : []).map((c) => ({ id: c.sessionId, name: c.name, closed: c.closed, counts: c.counts, children: [] })) };
      const drawn = renderTree(root, infoById);
      children.replaceChildren(...drawn.children);
      childrenEmpty.hidden = children.childElementCount > 0;
      const direct = live ? live.children : [];
      const closedCount = direct.filter((c) => c.closed).length;
      childrenSummary.textContent = direct.length ? `${direct.length - closedCount} running · ${closedCount} closed` : '';
    }

    let lastTree = null;
    async function refreshTree() {
      clearTimeout(treeTimer);
      if (stopped) return;
      if (!document.hidden) {
        try {
          const tree = await api(sessionPath(id, '/tree'));
          if (stopped) return;
          lastTree = tree;
          drawChildren(tree);
        } catch (error) {
          if (stopped || error.status === 401) return;
          drawChildren(lastTree); // keep what the session snapshot says
        }
      }
      if (live) updated.replaceChildren(timeEl(live.updatedAt, formatAgo));
      if (!stopped) treeTimer = setTimeout(refreshTree, TREE_REFRESH_MS);
    }

    let timelineRunning = false;
    let timelineAgain = false;
    async function refreshTimeline() {
      if (timelineRunning) {
        timelineAgain = true;
        return;
      }
      timelineRunning = true;
      try {
        const timeline = await api(sessionPath(id, '/timeline'));
        if (stopped) return;
        if (viewing === null) {
          steps = Array.isArray(timeline.steps) ? timeline.steps : [];
          renderHistoryControls();
        }
      } catch (error) {
        if (stopped || error.status === 401) return;
        stepText.textContent = `History unavailable: ${error.message}`;
      } finally {
        timelineRunning = false;
        if (timelineAgain && !stopped) {
          timelineAgain = false;
          void refreshTimeline();
        }
      }
    }
    // At most one timeline fetch per TIMELINE_MIN_GAP_MS however fast events arrive: a long
    // session's timeline is large, and a pending fetch is never pushed back (no starvation).
    let timelinePending = false;
    let timelineFetchedAt = 0;
    function scheduleTimeline(ms) {
      if (timelinePending) return;
      timelinePending = true;
      const wait = Math.max(ms, timelineFetchedAt + TIMELINE_MIN_GAP_MS - Date.now());
      timelineTimer = setTimeout(() => {
        timelinePending = false;
        timelineFetchedAt = Date.now();
        void refreshTimeline();
      }, wait);
    }

    function accept(snapshot) {
      if (!snapshot || typeof snapshot !== 'object') return;
      if (live && typeof snapshot.version === 'number' && snapshot.version < live.version) return; // stale
      const changed = !live || snapshot.version !== live.version;
      live = snapshot;
      problem.replaceChildren();
      renderHead(snapshot);
      if (viewing === null) {
        renderList(snapshot.todos);
        if (changed) scheduleTimeline(150);
      } else if (changed) {
        newsWhileAway = true;
      }
      renderHistoryControls();
      if (!lastTree) drawChildren(null);
      if (changed && rendered) void refreshTree();
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
        clearTimeout(timelineTimer);
      },
    };
  }

  /* ---------------------------------------------------------------- routing */

  function route() {
    if (gated) return;
    if (page) page.stop();
    page = null;
    const match = /^#\/sessions\/(.+)$/.exec(location.hash);
    let id = null;
    if (match) {
      try {
        id = decodeURIComponent(match[1]);
      } catch {
        id = null;
      }
    }
    page = id ? sessionPage(id) : sessionsPage();
    main.focus({ preventScroll: true });
  }

  window.addEventListener('hashchange', route);
  void tokenAccepted().then((ok) => (ok ? route() : askForToken()));
})();
