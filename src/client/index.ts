export {
  AgentSessionsError,
  MissingSessionIdError,
  SessionClosedError,
  SessionNotFoundError,
  TodoRejectedError,
} from './errors';
export { SessionClient, type StartResult, type TodoWriteOptions } from './session-client';
