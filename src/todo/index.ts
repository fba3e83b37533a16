export { acceptTodoWrite, trimTodoWriteArgs } from './acceptance';
export { DEFAULT_TODO_BOUNDS, type TodoBounds } from './bounds';
export { countTodos, renderCounts } from './counts';
export { renderTodoList, STATUS_MARKS } from './render-list';
export {
  describeTodoWrite,
  TODO_WRITE_TOOL_NAME,
  todoWriteToolDefinition,
  type TodoWriteToolDefinition,
} from './description';
export {
  applySessionEvent,
  foldSession,
  foldTodos,
  INITIAL_SESSION_STATE,
  snapshotSession,
  type SessionSnapshot,
  type SessionState,
} from './fold';
export { assertTodoInvariant, InvariantViolation } from './invariant';
export { assertTodoPolicy, POLICY_SETTING, type TodoPolicy } from './policy';
export {
  describeValue,
  formatPath,
  TodoRejection,
  type RejectionProblem,
  type RejectionRule,
} from './rejection';
export { todoStatusSchema, todoWriteArgsSchema, type TodoWriteArgs } from './schema';
export type { SessionCloseEvent, SessionEvent, TodoWriteEvent, TurnEndEvent, TurnStartEvent } from './session-event';
export {
  isTodoStatus,
  TODO_STATUSES,
  type TodoCounts,
  type TodoItem,
  type TodoList,
  type TodoStatus,
} from './todo-item';
export { jsonUtf8Length } from './utf8';
