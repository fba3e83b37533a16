/**
 * The todo tool, as the seed describes it: the item, the schema of `todo_write`'s arguments,
 * the acceptance checks, the durable invariant, the fold of the list, the tool description and
 * the render line. Pure: no Temporal, no Node built-ins.
 */
export { acceptTodoWrite, contentKey, shapeProblems, trimTodoWriteArgs } from './acceptance';
export { isBlank, NOT_BLANK_PATTERN, TRIMMED_CHARACTERS } from './blank-text';
export { DEFAULT_TODO_BOUNDS, type TodoBounds } from './bounds';
export { countTodos, renderCounts } from './counts';
export {
  describeTodoWrite,
  TODO_WRITE_TOOL_NAME,
  todoWriteToolDefinition,
  type TodoWriteToolDefinition,
} from './description';
export { foldTodos, type TodoListEvent } from './fold-todos';
export { assertTodoInvariant, InvariantViolation } from './invariant';
export { assertTodoPolicy, POLICY_SETTING, type TodoPolicy } from './policy';
export {
  describeValue,
  formatPath,
  Rejection,
  REJECTION_RULES,
  type RejectionProblem,
  type RejectionRule,
} from './rejection';
export { renderTodoList, STATUS_MARKS } from './render-list';
export { todoStatusSchema, todoWriteArgsSchema, zodShapeIssues, type TodoWriteArgs } from './schema';
export { checkShape, type ShapeIssue } from './shape-check';
export {
  isTodoStatus,
  TODO_STATUSES,
  type TodoCounts,
  type TodoItem,
  type TodoList,
  type TodoStatus,
} from './todo-item';
export { jsonUtf8Length } from './utf8';
