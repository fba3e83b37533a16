export { createWorker, type CreateWorkerOptions, type SessionWorker } from './create-worker';
export { ReplayFailedError, replaySessionHistory, type ReplayReport } from './replay';
export { bundleSessionWorkflows, workflowsPath } from './workflow-bundle';
