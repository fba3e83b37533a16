/**
 * The part of the domain the session workflow uses, none of which loads zod when imported:
 * the workflow's modules are evaluated for every new session and every replayed history, and
 * only the acceptance checks need the schema (they load it on first use). The package index
 * also re-exports the tool description, which builds JSON Schema from zod at import.
 */
export { acceptTodoWrite } from './acceptance';
export { assertCarriedState, carriedState } from './carried-state';
export { countTodos } from './counts';
export { checkWriteOptions } from './expected-version';
export {
  applySessionEvent,
  findReceipt,
  INITIAL_SESSION_STATE,
  snapshotSession,
  writeResult,
  type SessionSnapshot,
  type SessionState,
  type TodoWriteResult,
} from './fold';
export { ignoredSignalReason } from './ignored-signal';
export { TodoRejection } from './rejection';
export { checkSessionInput, SessionInputRejection, type SessionInput } from './session-input';
export type { TodoWriteArgs } from './schema';
export type { SessionEvent } from './session-event';
export { acceptSubagentSpawn, childSessionId, subagentIdTaken } from './subagent';
export type { TodoCounts } from './todo-item';
