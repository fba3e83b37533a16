import type { TodoList, TodoStatus } from './todo-item';

/** The mark shown before a todo of each status in plain-text views. */
export const STATUS_MARKS: Readonly<Record<TodoStatus, string>> = Object.freeze({
  pending: '[ ]',
  in_progress: '[>]',
  completed: '[x]',
});

/**
 * A list as lines a person reads at a glance, one todo per line with its status mark.
 *
 * @example renderTodoList([{ content: 'Run lint', status: 'completed' }]) // '[x] Run lint'
 */
export function renderTodoList(todos: TodoList, indent = ''): string {
  if (todos === null) return `${indent}(no todo list in the current turn)`;
  if (todos.length === 0) return `${indent}(empty todo list)`;
  return todos.map((todo) => `${indent}${STATUS_MARKS[todo.status]} ${todo.content}`).join('\n');
}
