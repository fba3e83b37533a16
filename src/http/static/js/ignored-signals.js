/* Signals a session received but does not handle (a `todo_write` sent as a Signal instead of an
 * Update, an unknown name…), each with the reason, which tells the sender what to send instead. */
import { h } from './dom.js';
import { dateTime, timeEl } from './time.js';

/**
 * The "Ignored signals (N)" card: `element`, hidden while there are none; `render(entries)`
 * shows the `ignoredSignals` of a `GET /sessions/{id}` answer (missing in sessions written
 * before the field existed: shown as none). Names and reasons are the sender's text, shown as text.
 */
export function createIgnoredSignals() {
  const title = h('h2', { id: 'ignored-title' }, 'Ignored signals');
  const list = h('ol', { id: 'ignored-signals-list', class: 'ignored-list' });
  const element = h('section', { class: 'card ignored-card', id: 'ignored-signals', 'aria-labelledby': 'ignored-title', hidden: true },
    h('div', { class: 'card-head' }, title),
    h('p', { class: 'ignored-intro muted' }, 'Signals this session received and did not apply: they changed nothing. Each reason says what to send instead.'),
    list,
  );

  function render(entries) {
    const shown = (Array.isArray(entries) ? entries : []).filter((entry) => entry && typeof entry === 'object');
    element.hidden = shown.length === 0;
    title.textContent = `Ignored signals (${shown.length})`;
    list.replaceChildren(
      ...shown.map((entry) =>
        h('li', { class: 'ignored-signal' },
          h('div', { class: 'ignored-row' },
            h('code', { class: 'ignored-name' }, String(entry.name ?? '')),
            typeof entry.at === 'string' ? timeEl(entry.at, dateTime) : h('span', { class: 'muted' }, 'time unknown'),
          ),
          h('p', { class: 'ignored-reason' }, String(entry.reason ?? '')),
        ),
      ),
    );
  }

  return { element, render };
}
