/* Time travel on a session page: a slider over `GET /sessions/{id}/timeline` (the state after
 * each event of the history), a "Live" button back to the current state, and "Fork…", which
 * starts a new session from the state shown (`POST /sessions/{id}/fork`). */
/* global setTimeout, clearTimeout, location */
import { api, sessionPath } from './api.js';
import { h } from './dom.js';
import { sessionHref } from './routes.js';
import { oneAtATime } from './one-at-a-time.js';
import { clockTime, timeEl } from './time.js';

const TIMELINE_MIN_GAP_MS = 1000;

/**
 * The history controls of session `id`. Options: `latest()` answers the live snapshot (or
 * null); `showList(todos, isLive)` draws a list; `onViewChange(lookingBack)` marks the card.
 * Answers the elements to place (`note` above the list, `controls` below it) and:
 * `isLive()`, `noteNews()` (the session changed while looking back), `render()`,
 * `schedule(ms)` (fetch the timeline again) and `stop()`.
 */
export function createTimeline(id, { latest, showList, onViewChange }) {
  let steps = [];
  let viewing = null; // index of the timeline step shown, or null when live
  let newsWhileAway = false;
  let stopped = false;
  let timer;

  const note = h('p', { class: 'history-note', id: 'history-note', hidden: true });
  const slider = h('input', { id: 'history-slider', type: 'range', min: 0, max: 0, value: 0, step: 1, disabled: true, 'aria-describedby': 'history-step' });
  const stepText = h('output', { id: 'history-step', for: 'history-slider', class: 'history-step' });
  const liveButton = h('button', { type: 'button', id: 'history-live', class: 'button', disabled: true }, 'Live');
  const forkButton = h('button', { type: 'button', id: 'history-fork', class: 'button', 'aria-expanded': 'false', 'aria-controls': 'fork-form' }, 'Fork…');
  const forkInput = h('input', { id: 'fork-id', name: 'newId', required: true, maxlength: 200, placeholder: 'id of the new session', 'aria-label': 'Id of the new session', autocomplete: 'off' });
  const forkSubmit = h('button', { type: 'submit', id: 'fork-submit', class: 'button button-primary' }, 'Fork');
  const forkCancel = h('button', { type: 'button', id: 'fork-cancel', class: 'button' }, 'Cancel');
  const forkWhere = h('p', { id: 'fork-where', class: 'fork-where' });
  const forkStatus = h('p', { id: 'fork-status', class: 'message-status', role: 'status', 'aria-live': 'polite' });
  const forkForm = h('form', { id: 'fork-form', class: 'fork-form', hidden: true },
    forkWhere,
    h('div', { class: 'fork-row' }, forkInput, forkSubmit, forkCancel),
    forkStatus,
  );
  const controls = h('div', { class: 'history' },
    h('div', { class: 'history-row' },
      h('label', { for: 'history-slider' }, 'History'),
      slider,
      liveButton,
      forkButton,
    ),
    stepText,
    forkForm,
  );

  /** Where a fork made now starts: the step shown, or the newest event when live. */
  function forkPoint() {
    if (viewing === null) return { body: {}, text: 'Fork at the newest event: a new session starts with this state; this one is not touched.' };
    const step = steps[viewing];
    return {
      body: { at: { eventId: step.eventId, runId: step.runId } },
      text: `Fork at event ${step.eventId} (${step.type}, turn ${step.turn}): a new session starts with the state shown; this one is not touched.`,
    };
  }

  function showForkForm(open) {
    forkForm.hidden = !open;
    forkButton.setAttribute('aria-expanded', String(open));
    if (!open) return;
    forkWhere.textContent = forkPoint().text;
    forkStatus.textContent = '';
    forkInput.focus();
  }
  forkButton.addEventListener('click', () => showForkForm(forkForm.hidden));
  forkCancel.addEventListener('click', () => showForkForm(false));
  forkForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const newId = forkInput.value.trim();
    if (newId === '') return;
    const { body } = forkPoint();
    forkSubmit.disabled = true;
    forkStatus.classList.remove('error-text');
    forkStatus.textContent = 'Forking…';
    try {
      const forked = await api(sessionPath(id, '/fork'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ newId, ...body }) });
      forkStatus.textContent = `Forked into ${forked.sessionId} at event ${forked.forkedFrom.eventId}.`;
      location.hash = sessionHref(forked.sessionId);
    } catch (error) {
      if (error.status === 401) return;
      forkStatus.textContent = `Not forked: ${error.message}`;
      forkStatus.classList.add('error-text');
    } finally {
      forkSubmit.disabled = false;
    }
  });

  function render() {
    if (!forkForm.hidden) forkWhere.textContent = forkPoint().text;
    const last = steps.length - 1;
    slider.max = String(Math.max(last, 0));
    slider.disabled = steps.length === 0;
    slider.value = String(viewing === null ? Math.max(last, 0) : viewing);
    liveButton.disabled = viewing === null;
    liveButton.classList.toggle('has-news', newsWhileAway);
    liveButton.textContent = newsWhileAway ? 'Live (new changes)' : 'Live';
    onViewChange(viewing !== null);
    if (viewing === null) {
      note.hidden = true;
      stepText.replaceChildren(
        h('span', { class: 'chip chip-live' }, 'live'),
        ' ',
        steps.length ? `${steps.length} events in the history · drag to look back` : 'no history yet',
      );
      return;
    }
    const step = steps[viewing];
    note.hidden = false;
    note.textContent = `Showing the list as it was after event ${viewing + 1} of ${steps.length}.`;
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
    const live = latest();
    if (live) showList(live.todos, true);
    render();
  }

  function showStep(index) {
    viewing = index;
    showList(steps[index].todos, false);
    render();
  }

  slider.addEventListener('input', () => {
    if (steps.length === 0) return;
    const index = Number(slider.value);
    const live = latest();
    // The newest step is the live state only when the timeline is current.
    if (index === steps.length - 1 && live && steps[index].version === live.version) showLive();
    else showStep(index);
  });
  liveButton.addEventListener('click', () => {
    showLive();
    schedule(0);
  });

  const refresh = oneAtATime(async () => {
    try {
      const timeline = await api(sessionPath(id, '/timeline'));
      if (stopped) return;
      if (viewing === null) {
        steps = Array.isArray(timeline.steps) ? timeline.steps : [];
        render();
      }
    } catch (error) {
      if (stopped || error.status === 401) return;
      stepText.textContent = `History unavailable: ${error.message}`;
    }
  }, () => stopped);
  // At most one timeline fetch per TIMELINE_MIN_GAP_MS however fast events arrive: a long
  // session's timeline is large, and a pending fetch is never pushed back (no starvation).
  let pending = false;
  let fetchedAt = 0;
  function schedule(ms) {
    if (pending) return;
    pending = true;
    const wait = Math.max(ms, fetchedAt + TIMELINE_MIN_GAP_MS - Date.now());
    timer = setTimeout(() => {
      pending = false;
      fetchedAt = Date.now();
      void refresh();
    }, wait);
  }

  return {
    note,
    controls,
    isLive: () => viewing === null,
    noteNews() {
      newsWhileAway = true;
    },
    render,
    schedule,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
