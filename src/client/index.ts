export {
  AgentSessionsError,
  MissingSessionIdError,
  SessionClosedError,
  SessionNotFoundError,
  TodoRejectedError,
} from './errors';
export { withBusyRetry } from './busy-retry';
export {
  SessionClient,
  type SessionClientOptions,
  type SessionListing,
  type SessionTree,
  type StartResult,
  type TodoWriteOptions,
} from './session-client';
