/* Whether a session still runs, as a badge. */
import { h } from './dom.js';

/** "Closed" or "Running". */
export function statusBadge(closed) {
  return closed
    ? h('span', { class: 'badge badge-closed' }, 'Closed')
    : h('span', { class: 'badge badge-running' }, 'Running');
}
