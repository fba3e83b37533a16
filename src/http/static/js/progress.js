/* How far a todo list is: counts by status, their one-line summary, and a progress bar. */
import { h } from './dom.js';

/** Counts of a list by status; unknown statuses are not counted. */
export function countTodos(todos) {
  const counts = { pending: 0, in_progress: 0, completed: 0 };
  for (const todo of todos || []) if (todo.status in counts) counts[todo.status] += 1;
  return counts;
}

/** A segmented progress bar: completed, then in progress, over the whole list. */
export function progressBar(counts, extraClass) {
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

/** "2/5 done · 1 in progress", "empty list", or "no answer" when the counts are unknown. */
export function countsText(counts) {
  if (!counts) return 'no answer';
  const total = counts.pending + counts.in_progress + counts.completed;
  if (total === 0) return 'empty list';
  const parts = [`${counts.completed}/${total} done`];
  if (counts.in_progress) parts.push(`${counts.in_progress} in progress`);
  return parts.join(' · ');
}
