export { createWorker, type CreateWorkerOptions, type SessionWorker } from './create-worker';
export { replaySessionHistory, type ReplayReport } from './replay';
export { ReplayFailedError } from '../client/errors';
export { installRuntimeLogging } from './runtime-logging';
export { bundleSessionWorkflows, workflowsPath } from './workflow-bundle';
