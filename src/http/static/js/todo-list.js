/* A session's todo list as the page shows it: a summary, a progress bar and the items, keyed by
 * their content so that an item whose status changes flashes once. */
import { h } from './dom.js';
import { countTodos, countsText, progressBar } from './progress.js';

const STATUS = {
  pending: { label: 'Pending', mark: '' },
  in_progress: { label: 'In progress', mark: '' },
  completed: { label: 'Completed', mark: '\u2713' },
};

/**
 * The list's parts, to be placed in the todo card: `summary` (for the card's head), `bar`,
 * `list` and `empty` (the text shown instead of an empty list); `render(todos, animate)` draws a
 * list (null: no plan in this turn), flashing changed items when `animate` (the live view).
 */
export function createTodoList() {
  const summary = h('span', { class: 'summary', id: 'summary' });
  const bar = h('div', { class: 'bar-slot' });
  const list = h('ul', { id: 'todos', class: 'todos', 'aria-live': 'polite', 'aria-labelledby': 'todos-title' });
  const empty = h('p', { class: 'empty', id: 'todos-empty', hidden: true });
  let rendered = false; // whether the list has been drawn once (no flash on first draw)

  function render(todos, animate) {
    const counts = countTodos(todos);
    const total = counts.pending + counts.in_progress + counts.completed;
    summary.textContent = todos === null ? 'no plan' : countsText(counts);
    bar.replaceChildren(progressBar(todos === null ? null : counts, 'bar-large'));
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
        if (rendered && animate) flash(li);
      }
      return li;
    });
    list.replaceChildren(...items);
    empty.hidden = total > 0;
    empty.textContent = todos === null ? 'No plan yet in this turn.' : 'The list is empty.';
    rendered = true;
  }

  return { summary, bar, list, empty, render, hasDrawn: () => rendered };
}

function flash(li) {
  li.classList.remove('changed');
  void li.offsetWidth; // restart the animation
  li.classList.add('changed');
}
