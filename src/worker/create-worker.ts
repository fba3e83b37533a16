import { NativeConnection, Worker, type BundlerPlugin, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { connectionOptions, resolveTemporalConfig, type TemporalConfig } from '../config/temporal-config';
import { assertTodoPolicy, type TodoPolicy } from '../todo';
import { assertSessionSearchAttributes } from './search-attributes-check';
import type { AgentWorkerSettings } from '../../activities/agent-activities';
import { AgentSessionsPlugin } from './sessions-plugin';
import { bundleSessionWorkflows, bundleWithPlugins } from './workflow-bundle';

/** Options of {@link createWorker}. The policy is required and has no default. */
export interface CreateWorkerOptions extends TodoPolicy {
  /**
   * Connection settings; each missing one takes its default (`127.0.0.1:7233`, namespace
   * `default`, task queue `agent-sessions`). No environment variable is read: pass
   * `loadSettings(process.env).temporal` for the CLI's behaviour.
   */
  temporal?: Partial<TemporalConfig>;
  /** An existing connection to share; otherwise the worker opens (and later closes) its own. */
  connection?: NativeConnection;
  /**
   * The agent loop's settings (model endpoint, key and name, step and context limits, nudge,
   * tools that wait for approval, workspace), as `loadSettings(env).agent` reads them. Missing
   * fields take their defaults; without a key or base URL a turn ends naming OPENAI_API_KEY.
   */
  agent?: Partial<AgentWorkerSettings>;
  /** Workflows kept in memory between tasks; 0 forces a full replay on every task. */
  maxCachedWorkflows?: number;
  /**
   * The user's own Temporal plugins (Temporal's AI SDK or OpenAI Agents plugins, interceptors,
   * OpenTelemetry), composed after this project's {@link AgentSessionsPlugin}: a plugin that
   * changes the workflow bundle gets the bundle built with it (not from the cache).
   */
  plugins?: WorkerPlugin[];
  /** The per-user cache folder for workflow bundles (default: `~/.cache/agent-sessions`). */
  cacheDir?: string;
  /** Anything else Temporal's `Worker.create` takes (identity, concurrency limits, …). */
  workerOptions?: Omit<Partial<WorkerOptions>, 'connection' | 'namespace' | 'taskQueue' | 'workflowBundle' | 'workflowsPath' | 'plugins'>;
}

/** A session worker: Temporal's worker plus the connection it owns. */
export interface SessionWorker {
  /** The underlying Temporal worker (state, shutdown, metrics). */
  readonly worker: Worker;
  readonly taskQueue: string;
  readonly namespace: string;
  readonly policy: TodoPolicy;
  /** Polls until {@link shutdown} (or a fatal error); closes a connection it opened itself. */
  run(): Promise<void>;
  /** Starts a graceful shutdown; `run()` resolves when it completes. */
  shutdown(): void;
}

/**
 * Creates a worker that runs session workflows under the deployment's parallel policy.
 *
 * @throws TypeError naming `allowParallelInProgress` when the policy is missing or not a boolean
 *   (the type system already refuses an omitted policy).
 * @example
 * const w = await createWorker({ allowParallelInProgress: false });
 * await w.run();
 */
export async function createWorker(options: CreateWorkerOptions): Promise<SessionWorker> {
  assertTodoPolicy(options, 'createWorker() options');
  const policy: TodoPolicy = { allowParallelInProgress: options.allowParallelInProgress };
  const config: TemporalConfig = resolveTemporalConfig(options.temporal);
  const plugins = options.plugins ?? [];
  const bundlers = plugins.filter(isBundlerPlugin);
  const workflowModules = options.workerOptions?.interceptors?.workflowModules ?? [];
  if (workflowModules.length > 0) {
    bundlers.push({ name: 'agent-sessions.workflow-modules', configureBundler: (o) => ({ ...o, workflowInterceptorModules: [...(o.workflowInterceptorModules ?? []), ...workflowModules] }) });
  }
  const bundle =
    bundlers.length > 0
      ? await bundleWithPlugins(policy, bundlers)
      : await bundleSessionWorkflows(policy, options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {});
  const owned = options.connection === undefined;
  const connection = options.connection ?? (await NativeConnection.connect(connectionOptions(config)));
  let worker: Worker;
  try {
    await assertSessionSearchAttributes(connection, config.namespace);
    worker = await Worker.create({
      // A model call heartbeats every second; its cancellation (an interrupt) reaches it with
      // the next heartbeat sent, so heartbeats must not be held back for 80% of the timeout.
      maxHeartbeatThrottleInterval: '1 second',
      ...options.workerOptions,
      connection,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      workflowBundle: bundle,
      plugins: [new AgentSessionsPlugin(policy, options.agent !== undefined ? { agent: options.agent } : {}), ...plugins],
      ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    });
  } catch (error) {
    if (owned) await connection.close();
    throw error;
  }
  return {
    worker,
    taskQueue: config.taskQueue,
    namespace: config.namespace,
    policy,
    async run() {
      try {
        await worker.run();
      } finally {
        if (owned) await connection.close();
      }
    },
    shutdown() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    },
  };
}

/** Whether a worker plugin also shapes the workflow bundle. */
function isBundlerPlugin(plugin: WorkerPlugin): plugin is WorkerPlugin & BundlerPlugin {
  return typeof (plugin as Partial<BundlerPlugin>).configureBundler === 'function';
}
