// The whole error hierarchy and its codes: every class of errors.ts is part of the library's surface.
export * from './errors';
export { grpcCode, isAbortedUpdate, isBusy, isResendableUpdateError, isUnavailable, isWorkflowNotReady, withBusyRetry, type BusyRetryOptions } from './transient-errors';
export { treeJson, type TreeJson } from './tree-json';
export { resolveForkPoint, type ForkAt } from './fork-point';
export { SessionClient, type ForkResult, type SessionClientOptions, type StartResult, type TodoWriteOptions } from './session-client';
export { childrenQuery, listChildren, listQuery, listSessions, type ListOptions, type SessionListing, type SessionPage } from './session-listing';
export { TREE_PAGE_LIMIT, type SessionTree, type TreeOptions } from './session-tree';
export {
  DEFAULT_STREAM_BATCH_MS,
  readStream,
  streamEnd,
  streamPublisher,
  streamRange,
  type ReadStreamOptions,
  type StreamEntry,
  type StreamPublisher,
  type StreamPublisherOptions,
  type StreamTarget,
} from './session-stream';
