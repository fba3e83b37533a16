export {
  AgentSessionsError,
  ERROR_CODES,
  InvalidInputError,
  InvalidSessionIdError,
  InvalidSettingError,
  MissingSessionIdError,
  NoWorkerError,
  OutcomeUnknownError,
  ReplayFailedError,
  RequestRejectedError,
  SessionBrokenError,
  SessionClosedError,
  SessionNotFoundError,
  SessionTimeoutError,
  SpawnRejectedError,
  TemporalUnavailableError,
  TodoRejectedError,
  type ErrorCode,
} from './errors';
export { grpcCode, isBusy, isUnavailable, withBusyRetry } from './transient-errors';
export { treeJson, type TreeJson } from './tree-json';
export {
  SessionClient,
  type SessionClientOptions,
  type SessionTree,
  type StartResult,
  type TodoWriteOptions,
} from './session-client';
export { listQuery, listSessions, type ListOptions, type SessionListing, type SessionPage } from './session-listing';
