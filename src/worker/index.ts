export { createWorker, type CreateWorkerOptions, type SessionWorker } from './create-worker';
export { ReplayFailedError, replaySessionHistory, type ReplayReport } from './replay';
export { installRuntimeLogging } from './runtime-logging';
export { bundleSessionWorkflows, workflowsPath } from './workflow-bundle';
