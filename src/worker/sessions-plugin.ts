import { SimplePlugin } from '@temporalio/plugin';
import type { BundleOptions, ReplayWorkerOptions, WorkerOptions } from '@temporalio/worker';
import { createAgentActivities, type AgentActivitiesOptions } from '../../activities/agent-activities';
import { assertTodoPolicy, type TodoPolicy } from '../todo';
import { tracingInterceptorsPath, workflowsPath } from './workflows-path';

// Derived: @temporalio/worker does not export its webpack configuration type from its root.
type WebpackConfiguration = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];

/** The constant the workflow's `deploymentPolicy()` reads (a bare identifier, so webpack substitutes it). */
export const POLICY_CONSTANT = '__AGENT_SESSIONS_ALLOW_PARALLEL_IN_PROGRESS__';

/** The constant the bundle's tracing interceptors read: whether this worker exports traces. */
export const TRACING_CONSTANT = '__AGENT_SESSIONS_TRACING__';

/** A webpack plugin, as far as this module uses one. */
interface WebpackPlugin {
  apply(compiler: { webpack: { DefinePlugin: new (definitions: Record<string, string>) => WebpackPlugin } }): void;
}

/** Options of {@link AgentSessionsPlugin} beyond the policy: the agent loop's settings on this worker. */
export type AgentSessionsPluginOptions = Omit<AgentActivitiesOptions, 'policy'> & {
  /**
   * Whether the bundle's tracing interceptors trace (default false): set by a worker that also
   * has Temporal's `OpenTelemetryPlugin`, whose sink receives the workflow's spans. The
   * interceptors are in every bundle either way, so the build id does not change with it.
   */
  tracing?: boolean;
};

/**
 * The Temporal plugin that makes a worker an agent-sessions worker: it registers the session
 * workflows and the agent loop's activities (model calls and tools, appended to the worker's own
 * activities), and bakes the deployment's parallel policy into their bundle as a constant
 * (webpack `DefinePlugin`), which only the `todo_write` validator reads. Built on
 * `@temporalio/plugin`'s `SimplePlugin`, so it composes with a user's own plugins (Temporal's AI
 * SDK or OpenAI Agents plugins, interceptors, OpenTelemetry): each `configure*` hook chains the
 * options it is given instead of replacing them.
 *
 * @throws TypeError naming `allowParallelInProgress` when the policy is missing or not a boolean.
 * @example
 * const worker = await Worker.create({ taskQueue: 'agent-sessions', plugins: [new AgentSessionsPlugin({ allowParallelInProgress: true })] });
 */
export class AgentSessionsPlugin extends SimplePlugin {
  readonly policy: TodoPolicy;
  readonly tracing: boolean;

  constructor(policy: TodoPolicy, options: AgentSessionsPluginOptions = {}) {
    assertTodoPolicy(policy, 'AgentSessionsPlugin');
    const fixed: TodoPolicy = { allowParallelInProgress: policy.allowParallelInProgress };
    const { tracing, ...activityOptions } = options;
    // SimplePlugin appends these to the activities the worker was given: a user's own stay.
    super({ name: 'agent-sessions', activities: createAgentActivities({ ...activityOptions, policy: fixed }) });
    this.policy = fixed;
    this.tracing = tracing === true;
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    return withWorkflows(super.configureWorker(options));
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return withWorkflows(super.configureReplayWorker(options));
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    const base = super.configureBundler(options);
    const previous = base.webpackConfigHook;
    const definitions = { [POLICY_CONSTANT]: JSON.stringify(this.policy.allowParallelInProgress), [TRACING_CONSTANT]: JSON.stringify(this.tracing) };
    const webpackConfigHook = (config: WebpackConfiguration): WebpackConfiguration => {
      const merged = previous ? previous(config) : config;
      // webpack is taken from the running compiler: it is @temporalio/worker's dependency, not ours.
      const definePolicy: WebpackPlugin = {
        apply(compiler) {
          new compiler.webpack.DefinePlugin(definitions).apply(compiler);
        },
      };
      return { ...merged, plugins: [...(merged.plugins ?? []), definePolicy as never] };
    };
    // Every bundle carries the tracing interceptors; the constant above says whether they trace.
    return { ...base, webpackConfigHook, workflowInterceptorModules: [...(base.workflowInterceptorModules ?? []), tracingInterceptorsPath()] };
  }
}

/** Points a worker at the session workflows unless it was given a bundle or a path already. */
function withWorkflows<T extends WorkerOptions | ReplayWorkerOptions>(options: T): T {
  if (options.workflowBundle !== undefined || options.workflowsPath !== undefined) return options;
  return { ...options, workflowsPath: workflowsPath() };
}
