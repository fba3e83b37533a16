/**
 * What the session workflow imports of the domain, none of which loads zod when imported: the
 * workflow's modules are evaluated for every new session and every replayed history, and only
 * the acceptance checks need the schema (they load it on first use). The tool's index also
 * exports the tool description, which builds JSON Schema from zod at import.
 */
export { acceptTodoWrite } from '../todo/acceptance';
export { countTodos } from '../todo/counts';
export { Rejection } from '../todo/rejection';
export type { TodoWriteArgs } from '../todo/schema';
export type { TodoCounts } from '../todo/todo-item';
export { applySessionEvent } from './apply-event';
export { assertCarriedState, carriedState } from './carried-state';
export { checkCarriedSample, type CarriedRefusal, type CarriedSample } from './carried-check';
export { checkWriteOptions } from './expected-version';
export { ignoredSignalReason } from './ignored-signal';
export type { ForkOrigin, SessionFork } from './fork';
export type { SessionEvent } from './session-event';
export { checkSessionInput, runStartAgent, runStartState, SessionInputRejection, type SessionInput } from './session-input';
export { findReceipt, INITIAL_SESSION_STATE, writeResult, type SessionState, type TodoWriteResult } from './session-state';
export { snapshotSession, type SessionSnapshot } from './snapshot';
export { acceptSubagentSpawn, childSessionId, subagentIdTaken } from './subagent';
export { boundToolResult, compactConversation, messagesForModel, nudgeMessage } from './agent-context';
export { acceptInterrupt, acceptToolDecision, acceptUserMessage } from './agent-requests';
export { acceptToolAccept, pinsAfterAccept, withheldNamed, type ToolAcceptInput, type ToolAcceptResult, type ToolPins, type WithheldTool } from './tool-pins';
export {
  addUsage,
  assertCarriedAgent,
  INITIAL_AGENT_STATE,
  RECENT_TURNS_KEPT,
  type AgentActivity,
  type AgentState,
  type ChatMessage,
  type ToolCall,
  type TurnEndReason,
  type TurnOutcome,
  type QueuedMessage,
} from './agent-state';
// Nothing here may import src/todo's index: it re-exports the tool description, which loads zod.
export { changedIndexValues, SESSION_SEARCH_ATTRIBUTES, sessionIndexValues, type SessionIndexValues } from './search-attributes';
