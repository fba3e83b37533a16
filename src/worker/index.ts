export { createWorker, type CreateWorkerOptions, type SessionWorker } from './create-worker';
export type { UserTool, UserToolContext } from '../../activities/user-tools';
export { replaySessionHistory, type ReplayReport } from './replay';
export { ReplayFailedError } from '../client/errors';
export { installRuntimeLogging, type RuntimeTelemetry } from './runtime-logging';
export { startWorkerMetrics, type WorkerMetricsEndpoint, type WorkerMetricsOptions } from './worker-metrics';
export { bundleSessionWorkflows, bundleWithPlugins, type BundleSessionWorkflowsOptions } from './workflow-bundle';
export { AgentSessionsPlugin } from './sessions-plugin';
export { workflowsPath } from './workflows-path';
