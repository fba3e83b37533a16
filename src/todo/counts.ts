import type { TodoCounts, TodoList } from './todo-item';

/** Counts the todos in each state; an absent list counts as empty. */
export function countTodos(todos: TodoList): TodoCounts {
  const counts: TodoCounts = { pending: 0, in_progress: 0, completed: 0 };
  for (const todo of todos ?? []) counts[todo.status] += 1;
  return counts;
}

/**
 * The confirmation line a model reads after a write.
 *
 * @example renderCounts({ pending: 2, in_progress: 1, completed: 0 })
 * // 'Updated todo list: 2 pending, 1 in progress, 0 completed'
 */
export function renderCounts(counts: TodoCounts): string {
  return `Updated todo list: ${counts.pending} pending, ${counts.in_progress} in progress, ${counts.completed} completed`;
}
