/** The three states a todo moves through. Nothing else: no `cancelled`, no `blocked`. */
export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const;

/** Lifecycle state of one todo. `in_progress` marks work happening now. */
export type TodoStatus = (typeof TODO_STATUSES)[number];

/**
 * One entry of an agent's plan. Deliberately nothing but text and status: every write replaces
 * the whole list, so entries need no identity (no id, no priority).
 */
export interface TodoItem {
  /** What the task is: a short imperative line, stored trimmed. */
  content: string;
  /** Where the task stands. */
  status: TodoStatus;
}

/** The current plan of a session: `null` when none has been written in the current turn. */
export type TodoList = TodoItem[] | null;

/** How many todos are in each state. */
export interface TodoCounts {
  pending: number;
  in_progress: number;
  completed: number;
}

/**
 * True for the three known status strings.
 *
 * @example isTodoStatus('in_progress') // true
 */
export function isTodoStatus(value: unknown): value is TodoStatus {
  return typeof value === 'string' && (TODO_STATUSES as readonly string[]).includes(value);
}
