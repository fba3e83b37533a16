import { NativeConnection, Worker, type BundlerPlugin, type WorkerOptions, type WorkerPlugin } from '@temporalio/worker';
import { Registry } from '../metrics/prom-client';
import { connectionOptions, resolveTemporalConfig, type TemporalConfig } from '../config/temporal-config';
import { assertTodoPolicy, type TodoPolicy } from '../todo';
import { assertSessionSearchAttributes } from './search-attributes-check';
import type { AgentWorkerSettings } from '../../activities/agent-activities';
import { AgentSessionsPlugin } from './sessions-plugin';
import { bundleSessionWorkflows, bundleWithPlugins, workflowBundleInputs } from './workflow-bundle';
import { activityInputs, buildIdOfCode, computeBuildId } from './build-id';
import { registerVersion, type VersionRegistration } from './version-registration';
import { givenTools, loadToolModule } from './tool-module';
import type { UserTool } from '../../activities/user-tools';
import type { DeploymentVersion } from '../release/deployment-api';
import type { WorkerTracing } from '../tracing';
import { advertiseStreamStore, type StreamStore } from '../streams';

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
   * The prom-client registry the agent loop's activities count into (writes, model calls,
   * tokens, turns: docs/observability.md); one of the worker's own unless given. Serve it
   * yourself, or run `agent-sessions worker --metrics-port` to serve it with Temporal's metrics.
   */
  metrics?: Registry;
  /**
   * The user's own Temporal plugins (Temporal's AI SDK or OpenAI Agents plugins, interceptors,
   * OpenTelemetry), composed after this project's {@link AgentSessionsPlugin}: a plugin that
   * changes the workflow bundle gets the bundle built with it (not from the cache).
   */
  plugins?: WorkerPlugin[];
  /** The per-user cache folder for workflow bundles (default: `~/.cache/agent-sessions`). */
  cacheDir?: string;
  /**
   * Traces (`startTracing(settings.tracing, …).worker`): Temporal's `OpenTelemetryPlugin` on the
   * worker and its bundle, and the GenAI spans of model and tool calls. The build id is the same
   * with or without it.
   */
  tracing?: WorkerTracing;
  /**
   * The Worker Deployment Version this worker serves. `name` defaults to the task queue's name
   * (`agent-sessions`), `buildId` to a hash of the workflow bundle's and the activities' code (see
   * `computeBuildId`): an unchanged release keeps its build id.
   */
  deployment?: { name?: string; buildId?: string };
  /**
   * The user's own tools, offered to the model beside the built-in and MCP ones, each call a
   * `runTool` activity: a list (see `UserTool`), or the path of a module whose default export is
   * one. Default: `agent.toolsModule` (`--tools`, `AGENT_SESSIONS_TOOLS`), else none. A name
   * that a built-in tool has stops the worker at start.
   */
  tools?: readonly UserTool[] | string;
  /**
   * Where the model's words go while a call runs (`openStreamStore`, docs/streaming.md): the
   * worker appends, sweeps what is older than {@link streamRetentionMs}, and records the store's
   * identity on its deployment version so an HTTP service reading another store is told at start.
   * Absent, words are not published (the answers are the same). The caller closes it.
   */
  streamStore?: StreamStore;
  /** How long the stream store keeps words (default 60 minutes). */
  streamRetentionMs?: number;
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
  /** The deployment version it serves: sessions it starts are pinned to it. */
  readonly version: DeploymentVersion;
  /** Where its activities count (the `metrics` option, or the worker's own registry). */
  readonly metrics: Registry;
  /**
   * Settles once the version is known to the server, after `run()` began polling: made current
   * when the deployment had no current version, else left waiting for `release promote`.
   */
  registered(): Promise<VersionRegistration>;
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
  const tracing = options.tracing;
  const bundle =
    bundlers.length > 0
      ? await bundleWithPlugins(policy, bundlers, { tracing: tracing !== undefined })
      : await bundleSessionWorkflows(policy, { ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}), tracing: tracing !== undefined });
  const inputs = bundlers.length > 0 ? undefined : workflowBundleInputs(bundle);
  const version: DeploymentVersion = {
    deploymentName: options.deployment?.name ?? config.taskQueue,
    buildId: options.deployment?.buildId ?? (inputs !== undefined ? computeBuildId(inputs, activityInputs()) : buildIdOfCode(bundle.code)),
  };
  const toolsGiven = options.tools ?? options.agent?.toolsModule;
  const userTools = toolsGiven === undefined ? undefined : typeof toolsGiven === 'string' ? await loadToolModule(toolsGiven) : givenTools(toolsGiven);
  const metrics = options.metrics ?? new Registry();
  // The store is checked before anything starts: a worker that cannot write its words says so now.
  const streamIdentity = await options.streamStore?.identity();
  const owned = options.connection === undefined;
  const connection = options.connection ?? (await NativeConnection.connect(connectionOptions(config)));
  let worker: Worker;
  try {
    await assertSessionSearchAttributes(connection, config.namespace);
    worker = await Worker.create({
      // A model call heartbeats every second; its cancellation (an interrupt) reaches it with
      // the next heartbeat sent, so heartbeats must not be held back for 80% of the timeout.
      maxHeartbeatThrottleInterval: '1 second',
      // A session is pinned to the build that started it; it moves to a new build only at a turn
      // boundary, by continuing as new (DESIGN, releases).
      workerDeploymentOptions: { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' },
      ...options.workerOptions,
      connection,
      namespace: config.namespace,
      taskQueue: config.taskQueue,
      workflowBundle: bundle,
      plugins: [
        new AgentSessionsPlugin(policy, {
          metrics,
          ...(options.agent !== undefined ? { agent: options.agent } : {}),
          ...(userTools !== undefined ? { userTools } : {}),
          ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}),
          ...(tracing !== undefined ? { spans: tracing.agentSpans, tracing: true } : {}),
          ...(options.streamStore !== undefined ? { streamStore: options.streamStore } : {}),
          ...(options.streamRetentionMs !== undefined ? { streamRetentionMs: options.streamRetentionMs } : {}),
        }),
        // Its workflow interceptors are already in the bundle (tracing-interceptors.ts): it adds the rest.
        ...(tracing !== undefined ? [tracing.plugin] : []),
        ...plugins,
      ],
      ...(options.maxCachedWorkflows !== undefined ? { maxCachedWorkflows: options.maxCachedWorkflows } : {}),
    });
  } catch (error) {
    if (owned) await connection.close();
    throw error;
  }
  let registration: Promise<VersionRegistration> | undefined;
  const register = (): Promise<VersionRegistration> =>
    (registration ??= registerVersion(connection.workflowService, config.namespace, version, worker.options.identity).then(async (registered) => {
      // Said on the version, where an HTTP service looks to check it reads the store this build writes to.
      if (streamIdentity !== undefined) await advertiseStreamStore(connection.workflowService, config.namespace, version, streamIdentity, worker.options.identity);
      return registered;
    }));
  return {
    worker,
    taskQueue: config.taskQueue,
    namespace: config.namespace,
    policy,
    version,
    metrics,
    registered: register,
    async run() {
      try {
        const running = worker.run();
        // The version exists on the server once the worker has polled: register it then.
        void register().catch(() => undefined);
        await running;
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
