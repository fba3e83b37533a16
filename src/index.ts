export {
  AgentSessionsError,
  MissingSessionIdError,
  SessionClient,
  SessionClosedError,
  SessionNotFoundError,
  TodoRejectedError,
  type StartResult,
  type TodoWriteOptions,
} from './client';
export { connectionOptions, TEMPORAL_DEFAULTS, temporalConfigFromEnv, type TemporalConfig } from './config/temporal-config';
export { findTemporalCli, isServing, startDevServer, type DevServerHandle, type DevServerOptions } from './devserver';
export {
  foldHistory,
  historyToJson,
  parseHistory,
  sessionEventsFromHistory,
  type HistoryJson,
  type LoggedSessionEvent,
  type SessionTimeline,
} from './history/session-history';
export {
  acceptTodoWrite,
  assertTodoInvariant,
  countTodos,
  DEFAULT_TODO_BOUNDS,
  describeTodoWrite,
  foldTodos,
  InvariantViolation,
  renderCounts,
  renderTodoList,
  Rejection,
  todoWriteArgsSchema,
  todoWriteToolDefinition,
  trimTodoWriteArgs,
  type RejectionRule,
  type TodoBounds,
  type TodoCounts,
  type TodoItem,
  type TodoList,
  type TodoPolicy,
  type TodoStatus,
  type TodoWriteArgs,
  type TodoWriteToolDefinition,
} from './todo';
export {
  applySessionEvent,
  foldSession,
  type SessionSnapshot,
  type SessionState,
} from './session';
export {
  bundleSessionWorkflows,
  createWorker,
  installRuntimeLogging,
  ReplayFailedError,
  replaySessionHistory,
  type CreateWorkerOptions,
  type ReplayReport,
  type SessionWorker,
} from './worker';
export {
  closeUpdate,
  SESSION_WORKFLOW_TYPE,
  sessionQuery,
  todosQuery,
  todoWriteUpdate,
  turnEndSignal,
  turnStartSignal,
  type AgentSessionInput,
  type TodoWriteResult,
} from '../workflows/messages';
