/* The page `#/sessions/<id>`: one session, live over its event stream, with its todo list, the
 * list's history, its agent's conversation (with a message box, Interrupt, and the calls waiting
 * for approval), its usage, its subagents and the signals it ignored. */
/* global document, AbortController, AbortSignal, setTimeout, clearTimeout */
import { api, dashboardConfig, sessionPath } from './api.js';
import { createApprovals } from './approvals.js';
import { createWithheldTools } from './withheld-tools.js';
import { createConversation } from './conversation.js';
import { errorBox, h } from './dom.js';
import { followEvents } from './event-stream.js';
import { createIgnoredSignals } from './ignored-signals.js';
import { applyStreamEvent, recorded } from './live-answer.js';
import { createMessageBox } from './message-box.js';
import { oneAtATime } from './one-at-a-time.js';
import { createSessionHead } from './session-head.js';
import { createSubagentTree } from './subagent-tree.js';
import { createTimeline } from './timeline.js';
import { createTodoList } from './todo-list.js';
import { setBreadcrumb, setConnection } from './top-bar.js';
import { createUsageCard } from './usage-card.js';

const TREE_REFRESH_MS = 4000;
/** Subagents per page of the tree: "Show more subagents" asks for one more page. */
const TREE_PAGE = 100;

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
  let treePages = 1;
  const subagents = createSubagentTree(id, {
    onMore: () => {
      treePages += 1;
      void refreshTree();
    },
  });
  const ignored = createIgnoredSignals();
  const todosCard = h('section', { class: 'card todos-card', 'aria-labelledby': 'todos-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'todos-title' }, 'Todo list'), todoList.summary),
    todoList.bar,
    timeline.note,
    todoList.list,
    todoList.empty,
    timeline.controls,
  );
  const conversation = createConversation();
  // A turn links to its trace once the service says where traces open.
  void dashboardConfig().then((config) => {
    conversation.useTraceUrl(config && config.traceUrl);
    if (!stopped && lastTranscript) conversation.render(lastTranscript, pendingIds());
  });
  const messageBox = createMessageBox(id, () => (live ? void refreshAgent() : void startedByMessage()));
  const approvals = createApprovals(id, () => void refreshAgent());
  const withheld = createWithheldTools(id, () => void refreshAgent());
  const usage = createUsageCard();
  const conversationCard = h('section', { class: 'card conversation-card', 'aria-labelledby': 'conversation-title' },
    h('div', { class: 'card-head' }, h('h2', { id: 'conversation-title' }, 'Conversation')),
    conversation.element,
    conversation.empty,
    conversation.outcome,
    messageBox.element,
  );
  const columns = h('div', { class: 'columns', id: 'columns', hidden: true },
    h('div', { class: 'main-col' }, todosCard, conversationCard),
    h('div', { class: 'side' }, approvals.element, withheld.element, usage.element, subagents.element, ignored.element),
  );
  main.replaceChildren(head.element, problem, columns);

  // The first `treePages` pages of the tree, one visibility call each; a subagent that closed
  // between two pages can be listed on both, and is shown once.
  async function fetchTree() {
    const tree = await api(sessionPath(id, `/tree?limit=${TREE_PAGE}`));
    const seen = new Set(tree.children.map((child) => child.id));
    for (let page = 1; page < treePages && tree.nextPageToken; page++) {
      const next = await api(sessionPath(id, `/tree?limit=${TREE_PAGE}&pageToken=${encodeURIComponent(tree.nextPageToken)}`));
      tree.children.push(...next.children.filter((child) => !seen.has(child.id)));
      for (const child of next.children) seen.add(child.id);
      tree.nextPageToken = next.nextPageToken;
    }
    return tree;
  }

  let lastTree = null;
  async function refreshTree() {
    clearTimeout(treeTimer);
    if (stopped) return;
    if (!document.hidden) {
      try {
        const tree = await fetchTree();
        if (stopped) return;
        lastTree = tree;
        subagents.draw(tree, live);
        // A subagent's model calls move the tree's usage, not this session's revision: read it with the tree.
        if (Array.isArray(tree.children) && tree.children.length > 0) usage.render(await api(sessionPath(id, '/usage')));
      } catch (error) {
        if (stopped || error.status === 401) return;
        subagents.draw(lastTree, live); // keep what the session snapshot says
      }
    }
    if (live) head.showUpdated(live);
    if (!stopped) treeTimer = setTimeout(refreshTree, TREE_REFRESH_MS);
  }

  // The transcript and the usage, fetched again whenever the agent's revision moves, one fetch at a time.
  let agentRevision = null;
  let lastTranscript = null;
  const refreshAgent = oneAtATime(async () => {
    try {
      const [transcript, cost] = await Promise.all([api(sessionPath(id, '/transcript')), api(sessionPath(id, '/usage'))]);
      if (stopped) return;
      lastTranscript = transcript;
      conversation.render(transcript, pendingIds());
      settleAnswer();
      usage.render(cost);
    } catch (error) {
      if (stopped || error.status === 401) return;
      conversation.outcome.hidden = false;
      conversation.outcome.textContent = `Could not load the conversation: ${error.message}`;
    }
  }, () => stopped);
  const pendingIds = () => new Set(live && live.agent && Array.isArray(live.agent.pendingApprovals) ? live.agent.pendingApprovals.map((p) => p.callId) : []);

  function accept(snapshot) {
    if (!snapshot || typeof snapshot !== 'object') return;
    if (live && typeof snapshot.version === 'number' && snapshot.version < live.version) return; // stale
    const changed = !live || snapshot.version !== live.version;
    live = snapshot;
    problem.replaceChildren();
    // Back from the "start this session" card, when a first message created the session.
    if (messageBox.element.parentNode !== conversationCard) conversationCard.append(messageBox.element);
    head.render(snapshot);
    ignored.render(snapshot.ignoredSignals);
    messageBox.render(snapshot);
    approvals.render(snapshot);
    withheld.render(snapshot);
    followWords();
    const revision = snapshot.agent ? snapshot.agent.revision : 0;
    if (revision !== agentRevision) {
      agentRevision = revision;
      void refreshAgent();
    } else if (lastTranscript) {
      conversation.render(lastTranscript, pendingIds());
    }
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

  /* the model's words as they are written (GET /sessions/{id}/stream) */
  let answer = null; // the answer a model call is writing, as its words came
  let followingWords = false;
  // The growing answer gives way to the durable message once the transcript holds it; a call that
  // failed or was cancelled leaves nothing to show (the turn's outcome says why).
  function settleAnswer() {
    if (!answer || !answer.outcome) return;
    if (answer.outcome !== 'completed' || (lastTranscript && recorded(answer, lastTranscript))) {
      answer = null;
      conversation.showLive(null);
    }
  }
  function followWords() {
    if (followingWords) return;
    followingWords = true;
    void followEvents(sessionPath(id, '/stream'), signal, {
      onOpen: () => {},
      onEvent: (message) => {
        if (message.event === 'ready' || message.event === 'gap' || message.event === 'problem' || message.event === 'malformed') return;
        let event;
        try {
          event = JSON.parse(message.data);
        } catch {
          return;
        }
        const next = applyStreamEvent(answer, event);
        if (next === answer) return;
        answer = next;
        conversation.showLive(answer);
        if (answer && answer.outcome === 'completed') void refreshAgent();
        settleAnswer();
      },
      onError: () => {},
      onRetry: () => {},
    }, { resume: true });
  }

  /* data */
  // A session that does not exist (yet): say so, and, for a top-level id, offer the message box,
  // since a first message starts the session (a subagent is started only by its parent).
  function showMissing(message) {
    if (document.getElementById('start-card')) return; // already shown: keep what is being typed
    problem.replaceChildren(errorBox(capitalize(message)));
    if (id.includes('/')) return;
    problem.append(h('section', { class: 'card start-card', id: 'start-card', 'aria-label': 'Start this session' },
      h('p', {}, 'Send a first message to start this session: its agent plans with todo_write and works through the list, live here.'),
      messageBox.element,
    ));
  }

  api(sessionPath(id))
    .then((snapshot) => !stopped && accept(snapshot))
    .catch((error) => {
      if (stopped || error.status === 401) return;
      if (error.status === 404) showMissing(error.message);
      else problem.replaceChildren(errorBox(`Could not load the session: ${error.message}`));
    });

  // The session a first message just created: read it, and follow its stream again at once (the
  // reader that found no session is waiting out its back-off).
  async function startedByMessage() {
    try {
      const snapshot = await api(sessionPath(id));
      if (stopped) return;
      accept(snapshot);
      follow();
    } catch (error) {
      if (stopped || error.status === 401) return;
      problem.replaceChildren(errorBox(`Could not load the session: ${error.message}`));
    }
  }

  let stream = null; // the AbortController of the current reader of the event stream
  function follow() {
    if (stream) stream.abort();
    stream = new AbortController();
    void followEvents(sessionPath(id, '/events'), AbortSignal.any([signal, stream.signal]), {
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
        if (!error || error.status !== 404) return;
        if (live) problem.replaceChildren(errorBox(capitalize(error.message)));
        else showMissing(error.message);
      },
      onRetry: (ms) => setConnection('reconnecting', `Reconnecting in ${Math.ceil(ms / 1000)} s…`),
    });
  }

  void refreshTree();
  follow();

  return {
    stop() {
      stopped = true;
      controller.abort();
      clearTimeout(treeTimer);
      timeline.stop();
    },
  };
}
