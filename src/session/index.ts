/**
 * The session, as its log makes it: the events, the state and its fold, write receipts,
 * subagents, the state carried across continue-as-new, the run's checked input, ignored
 * signals and the snapshot the `session` query answers. Pure: no Temporal, no Node built-ins.
 */
export {
  boundToolResult,
  compactConversation,
  MAX_TOOL_RESULT_CHARS,
  MAX_QUEUED_MESSAGES,
  MAX_USER_MESSAGE_CHARS,
  messagesForModel,
  nudgeMessage,
} from './agent-context';
export { acceptInterrupt, acceptToolDecision, acceptUserMessage, type ToolDecisionInput, type UserMessageInput } from './agent-requests';
export {
  addUsage,
  assertCarriedAgent,
  INITIAL_AGENT_STATE,
  messageChars,
  NO_USAGE,
  RECENT_TURNS_KEPT,
  type AgentActivity,
  type AgentState,
  type ChatMessage,
  type PendingApproval,
  type QueuedMessage,
  type ToolCall,
  type TurnEndReason,
  type TurnOutcome,
  type Usage,
} from './agent-state';
export { applySessionEvent, foldSession } from './apply-event';
export { assertCarriedState, carriedState } from './carried-state';
export { checkExpectedVersion, checkWriteOptions } from './expected-version';
export { cut, HANDLED_SIGNALS, IGNORED_SIGNALS_KEPT, ignoredSignalReason, type IgnoredSignal } from './ignored-signal';
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
export { checkForkInput, forkAt, MAX_FORKED_CHILDREN, type ForkOrigin, type SessionFork } from './fork';
export {
  checkSessionInput,
  CONTINUE_AS_NEW_AFTER_RANGE,
  runStartAgent,
  runStartState,
  SESSION_ID_SEPARATOR,
  SessionInputRejection,
  NEW_SESSION_ID_PATTERN,
  newSessionIdProblem,
  SEARCHABLE_PATTERN,
  topLevelIdProblem,
  UNSEARCHABLE_CHARACTER,
  type RunFacts,
  type SessionInput,
} from './session-input';
export {
  findReceipt,
  INITIAL_SESSION_STATE,
  LEGACY_RECENT_WRITES_KEPT,
  receiptOf,
  RECENT_WRITES_KEPT,
  writeResult,
  type ChildSession,
  type SessionState,
  type TodoWriteResult,
  type LegacyWriteReceipt,
  type WriteReceipt,
} from './session-state';
export {
  changedIndexValues,
  IN_PROGRESS_CONTENT_BYTES,
  IN_PROGRESS_CONTENT_CHARS,
  inProgressContent,
  SESSION_SEARCH_ATTRIBUTES,
  sessionIndexValues,
  type SessionIndexValues,
  type SessionSearchAttribute,
} from './search-attributes';
export { snapshotSession, type AgentStatus, type SessionAbout, type SessionParent, type SessionSnapshot } from './snapshot';
export { acceptSubagentSpawn, childSessionId, MAX_TASK_LENGTH, SUBAGENT_NAME_PATTERN, subagentIdTaken, type SubagentSpawnInput } from './subagent';
