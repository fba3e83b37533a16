import { assertTodoInvariant } from './invariant';
import type { TodoList } from './todo-item';

/** What the list's fold looks at in an event: its type and, for a write, its list. */
export interface TodoListEvent {
  type: string;
  /** For `todo/write`: the list as logged (checked, not trusted). */
  todos?: unknown;
  /** Names the event in an invariant failure, e.g. `todo/write at event 12`. */
  label?: string;
}

/**
 * The `todos` projection (DESIGN §6): one step of the fold.
 * - `todo/write` → the event's list (last write wins), after the durable invariant;
 * - `turn/start` → `null`, a new turn starts with no plan;
 * - anything else, `turn/end` included → unchanged, so the finished list stays visible.
 *
 * @throws InvariantViolation when a `todo/write` holds a list that breaks the invariant.
 */
export function foldTodos(todos: TodoList, event: TodoListEvent): TodoList {
  switch (event.type) {
    case 'todo/write':
      assertTodoInvariant(event.todos, event.label ?? 'todo/write');
      return event.todos;
    case 'turn/start':
      return null;
    default:
      return todos;
  }
}
