export { acceptTodoWrite, contentKey, trimTodoWriteArgs } from './acceptance';
export { DEFAULT_TODO_BOUNDS, type TodoBounds } from './bounds';
export { countTodos, renderCounts } from './counts';
export { renderTodoList, STATUS_MARKS } from './render-list';
export {
  describeTodoWrite,
  TODO_WRITE_TOOL_NAME,
  todoWriteToolDefinition,
  type TodoWriteToolDefinition,
} from './description';
export { assertCarriedState, carriedState } from './carried-state';
export { checkExpectedVersion, checkWriteOptions } from './expected-version';
export {
  applySessionEvent,
  findReceipt,
  foldSession,
  foldTodos,
  INITIAL_SESSION_STATE,
  RECENT_WRITES_KEPT,
  snapshotSession,
  writeResult,
  type ChildSession,
  type SessionParent,
  type SessionSnapshot,
  type SessionState,
  type TodoWriteResult,
  type WriteReceipt,
} from './fold';
export { HANDLED_SIGNALS, IGNORED_SIGNALS_KEPT, ignoredSignalReason, type IgnoredSignal } from './ignored-signal';
export { assertTodoInvariant, InvariantViolation } from './invariant';
export { assertTodoPolicy, POLICY_SETTING, type TodoPolicy } from './policy';
export {
  describeValue,
  formatPath,
  REJECTION_RULES,
  TodoRejection,
  type RejectionProblem,
  type RejectionRule,
} from './rejection';
export { todoStatusSchema, todoWriteArgsSchema, type TodoWriteArgs } from './schema';
export type {
  SessionCloseEvent,
  SessionEvent,
  SignalIgnoredEvent,
  SubagentClosedEvent,
  SubagentSpawnEvent,
  TodoWriteEvent,
  TurnEndEvent,
  TurnStartEvent,
} from './session-event';
export {
  checkSessionInput,
  CONTINUE_AS_NEW_AFTER_RANGE,
  SESSION_ID_SEPARATOR,
  SessionInputRejection,
  topLevelIdProblem,
  type RunFacts,
  type SessionInput,
} from './session-input';
export { acceptSubagentSpawn, childSessionId, MAX_TASK_LENGTH, subagentIdTaken, type SubagentSpawnInput } from './subagent';
export {
  isTodoStatus,
  TODO_STATUSES,
  type TodoCounts,
  type TodoItem,
  type TodoList,
  type TodoStatus,
} from './todo-item';
export { jsonUtf8Length } from './utf8';
