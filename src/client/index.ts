export {
  AgentSessionsError,
  MissingSessionIdError,
  SessionClosedError,
  SessionNotFoundError,
  TodoRejectedError,
} from './errors';
export { isBusy, isUnavailable, withBusyRetry } from './transient-errors';
export { treeJson, type TreeJson } from './tree-json';
export {
  SessionClient,
  type SessionClientOptions,
  type SessionListing,
  type SessionTree,
  type StartResult,
  type TodoWriteOptions,
} from './session-client';
