import { SimplePlugin } from '@temporalio/plugin';
import { Runtime, type BundleOptions, type ReplayWorkerOptions, type Worker, type WorkerOptions } from '@temporalio/worker';
import { McpPool } from '../../activities/mcp-pool';
import { packageVersion } from '../config/package-version';
import { createAgentActivities, type AgentActivitiesOptions } from '../../activities/agent-activities';
import { createForkActivities, type ForkActivitiesOptions } from '../../activities/fork-activities';
import { assertTodoPolicy, type TodoPolicy } from '../todo';
import { activityModules } from './build-id';
import { withPolicyDefined } from './policy-bundler';
import { workflowsPath } from './workflows-path';

// The activities' module graph as it is now, just loaded: what the build id hashes (see activityModules).
activityModules();

export { POLICY_CONSTANT, TRACING_CONSTANT } from './policy-bundler';

/**
 * Options of {@link AgentSessionsPlugin} beyond the policy: the agent loop's settings on this
 * worker, where forks cache their replay bundle, and whether the bundle's tracing interceptors
 * trace (default false: set by a worker that also has Temporal's `OpenTelemetryPlugin`, whose sink
 * receives the workflow's spans; the interceptors are in every bundle either way, so the build id
 * does not change with it).
 */
export type AgentSessionsPluginOptions = Omit<AgentActivitiesOptions, 'policy'> &
  Pick<ForkActivitiesOptions, 'cacheDir'> & {
    tracing?: boolean;
    /** How long the stream store keeps words (default 60 minutes): the worker, the store's one writer, sweeps older ones while it runs. */
    streamRetentionMs?: number;
  };

/** How often a worker sweeps the stream store, at most. */
const SWEEP_EVERY_MS = 60_000;

/**
 * The Temporal plugin that makes a worker an agent-sessions worker: it registers the session
 * workflows, the agent loop's activities (model calls and tools) and the fork's (appended to the
 * worker's own activities), and bakes the deployment's parallel policy into their bundle as a constant
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
    const { cacheDir, tracing, streamRetentionMs, ...agent } = options;
    // One pool of MCP connections per worker, closed when the worker stops (runWorker below).
    const servers = agent.agent?.mcpServers ?? [];
    const mcp = servers.length > 0 ? new McpPool(servers, undefined, packageVersion()) : undefined;
    // SimplePlugin appends these to the activities the worker was given: a user's own stay.
    super({
      name: 'agent-sessions',
      activities: {
        ...createAgentActivities({ ...agent, policy: fixed, ...(mcp !== undefined ? { mcp } : {}) }),
        ...createForkActivities({ policy: fixed, ...(cacheDir !== undefined ? { cacheDir } : {}) }),
      },
    });
    this.policy = fixed;
    this.tracing = tracing === true;
    this.mcp = mcp;
    this.streamStore = agent.streamStore;
    this.streamRetentionMs = streamRetentionMs ?? 60 * 60_000;
  }

  private readonly streamStore: AgentActivitiesOptions['streamStore'];
  private readonly streamRetentionMs: number;

  /** The worker's MCP servers, when it has any. */
  readonly mcp: McpPool | undefined;

  override async runWorker(worker: Worker, next: (w: Worker) => Promise<void>): Promise<void> {
    const store = this.streamStore;
    const retention = this.streamRetentionMs;
    // Words older than the retention are dropped by the store's one writer, while it runs; a failed sweep is tried at the next.
    const sweep = (): void => void store?.sweep(retention).catch((error: Error) => Runtime.instance().logger.warn(`the stream store's retention sweep failed (${error.message}); it is tried again in a minute`));
    const sweeper = store !== undefined ? setInterval(sweep, Math.min(SWEEP_EVERY_MS, Math.max(1000, retention / 4))) : undefined;
    sweeper?.unref();
    sweep();
    try {
      await super.runWorker(worker, next);
    } finally {
      clearInterval(sweeper);
      // Stops the stdio servers this worker started; an HTTP server's connection is let go.
      await this.mcp?.close();
    }
  }

  override configureWorker(options: WorkerOptions): WorkerOptions {
    return withWorkflows(super.configureWorker(options));
  }

  override configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return withWorkflows(super.configureReplayWorker(options));
  }

  override configureBundler(options: BundleOptions): BundleOptions {
    return withPolicyDefined(super.configureBundler(options), this.policy, this.tracing);
  }
}

/** Points a worker at the session workflows unless it was given a bundle or a path already. */
function withWorkflows<T extends WorkerOptions | ReplayWorkerOptions>(options: T): T {
  if (options.workflowBundle !== undefined || options.workflowsPath !== undefined) return options;
  return { ...options, workflowsPath: workflowsPath() };
}
