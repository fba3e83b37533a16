// The whole error hierarchy and its codes: every class of errors.ts is part of the library's surface.
export * from './errors';
export { grpcCode, isAbortedUpdate, isBusy, isResendableUpdateError, isUnavailable, isWorkflowNotReady, withBusyRetry, type BusyRetryOptions } from './transient-errors';
export { treeJson, type TreeJson } from './tree-json';
export { resolveForkPoint, type ForkAt } from './fork-point';
export {
  SessionClient,
  type ForkResult,
  type SessionClientOptions,
  type SessionTree,
  type StartResult,
  type TodoWriteOptions,
} from './session-client';
export { listQuery, listSessions, type ListOptions, type SessionListing, type SessionPage } from './session-listing';
