import { dirname, join } from 'node:path';
import { SessionClient } from '../client';
import type { AgentSettings, Settings, TemporalConfig } from '../config';
import type { TodoPolicy } from '../todo';
import { findPhoenix, findTemporalCli, isServing, startDevServer, startPhoenix, type DevServerHandle, type RunningPhoenix } from '../devserver';
import { startHttpServer, type HttpServer } from '../http/server';
import { createWorker } from '../worker/create-worker';
import { installRuntimeLogging } from '../worker/runtime-logging';
import { startWorkerMetrics, type WorkerMetricsEndpoint } from '../worker/worker-metrics';
import { clientOptions, temporalOptions } from './command-settings';
import { requirePolicy } from './policy-option';
import { reportStopped } from './report-stopped';
import { upModel, type UpModel } from './up-demo';
import { describeRegistration, releaseTarget } from './release-command';
import type { SessionWorker } from '../worker/create-worker';
import { startTracing, type Tracing } from '../tracing';
import { openStreamStore, type StreamStore } from '../streams';

/** Resolves on the first SIGINT or SIGTERM. */
function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

interface LocalServerOptions {
  port: number;
  uiPort?: number;
  db?: string;
}

async function startLocalServer(settings: Settings, options: LocalServerOptions): Promise<DevServerHandle> {
  const { cacheDir, dataDir, temporalCliPath } = settings.paths;
  return startDevServer({
    port: options.port,
    ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
    dbFile: options.db ?? join(dataDir, 'temporal.sqlite'),
    cacheDir,
    ...(temporalCliPath !== undefined ? { temporalCliPath } : {}),
  });
}

/** `agent-sessions dev`: the local Temporal server in the foreground. */
export async function runDevServer(settings: Settings, options: LocalServerOptions): Promise<void> {
  const server = await startLocalServer(settings, options);
  process.stderr.write(
    `Temporal dev server at ${server.address}` +
      `${server.uiUrl !== undefined ? `, Web UI at ${server.uiUrl}` : ''}; state in ${server.dbFile}, log in ${server.logFile}; ` +
      `its CLI: ${server.temporalCli}. Ctrl-C stops it.\n`,
  );
  const stopped = await Promise.race([untilStopSignal(), server.exited.then((code) => code)]);
  if (typeof stopped === 'string') {
    await server.stop(reportStopped);
    return;
  }
  throw new Error(`the Temporal dev server exited by itself (code ${String(stopped)})`);
}

/** The process's tracer when the settings name an OTLP endpoint (nothing of OpenTelemetry is loaded otherwise). */
async function tracingOf(settings: Settings, serviceName: string): Promise<Tracing | undefined> {
  return settings.tracing !== undefined ? startTracing(settings.tracing, { serviceName }) : undefined;
}

/** Starts the HTTP service of the settings (host, port, token, CORS origins, extra Host names) against `temporal`. */
async function startHttp(settings: Settings, temporal: TemporalConfig, streamStore: StreamStore, tracing?: Tracing): Promise<HttpServer> {
  const { host, port, token, corsOrigins, allowedHosts } = settings.http;
  return startHttpServer({
    streamStore,
    deployment: settings.release.deployment,
    client: SessionClient.lazy({ ...clientOptions(settings, temporal), ...(tracing !== undefined ? { plugins: [tracing.clientPlugin] } : {}) }),
    port,
    host,
    ...(tracing !== undefined ? { tracing } : {}),
    ...(settings.traceUrl !== undefined ? { traceUrl: settings.traceUrl } : {}),
    ...(settings.policy !== undefined ? { policy: settings.policy } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(corsOrigins.length > 0 ? { corsOrigins } : {}),
    ...(allowedHosts.length > 0 ? { allowedHosts } : {}),
  });
}

/** `agent-sessions serve`: the HTTP API and dashboard until SIGINT/SIGTERM. */
export async function runServe(settings: Settings): Promise<void> {
  const temporal = temporalOptions(settings);
  const tracing = await tracingOf(settings, 'agent-sessions-http');
  const streamStore = openStreamStore(settings.streams);
  try {
    const server = await startHttp(settings, temporal, streamStore, tracing);
    process.stderr.write(
      `HTTP API and dashboard at ${server.url} (Temporal ${temporal.address}; the model's words from the stream store ${(await streamStore.identity()).location})` +
        `${settings.http.token !== undefined ? '; bearer token required' : ''}${tracedNote(tracing)}. Ctrl-C stops it.\n`,
    );
    await untilStopSignal();
    await server.close();
  } finally {
    await streamStore.close();
    await tracing?.shutdown();
  }
}

/** `; traces to <endpoint>` when the process traces. */
function tracedNote(tracing: Tracing | undefined): string {
  return tracing !== undefined ? `; traces to ${tracing.settings.endpoint} as ${tracing.serviceName}` : '';
}

/**
 * Installs the process's Temporal runtime, before its worker: with the worker's metrics endpoint
 * on `port` (the settings' `--metrics-port` unless given), or without metrics when there is none.
 */
async function installRuntime(settings: Settings, port: number | undefined = settings.metrics.port): Promise<WorkerMetricsEndpoint | undefined> {
  if (port === undefined) {
    installRuntimeLogging();
    return undefined;
  }
  return startWorkerMetrics({ host: settings.metrics.host, port });
}

/** `agent-sessions worker`: a session worker until SIGINT/SIGTERM. */
export async function runWorker(settings: Settings): Promise<void> {
  const policy = requirePolicy(settings.policy);
  const metrics = await installRuntime(settings);
  const streamStore = openStreamStore(settings.streams);
  try {
    const temporal = temporalOptions(settings);
    const tracing = await tracingOf(settings, 'agent-sessions-worker');
    const sessionWorker = await createSessionWorker(settings, policy, temporal, settings.agent, metrics, tracing, streamStore);
    process.stderr.write(
      `worker polling task queue "${sessionWorker.taskQueue}" on ${temporal.address} (namespace ${sessionWorker.namespace}), ` +
        `allowParallelInProgress=${policy.allowParallelInProgress}, build ${sessionWorker.version.buildId}, ` +
        `the model's words to the stream store ${(await streamStore.identity()).location}` +
        `${metrics !== undefined ? `; metrics at ${metrics.url}` : ''}${tracedNote(tracing)}\n`,
    );
    const running = sessionWorker.run();
    void sessionWorker.registered().then(
      (registration) => process.stderr.write(`${describeRegistration(sessionWorker.version, registration)}\n`),
      (error: Error) => process.stderr.write(`worker: ${error.message}\n`),
    );
    await Promise.race([untilStopSignal().then(() => sessionWorker.shutdown()), running]);
    await running;
    await tracing?.shutdown();
  } finally {
    await streamStore.close();
    await metrics?.close();
  }
}

/**
 * The session worker of `worker` and `up`: its deployment version as the settings name it (a
 * missing build id is computed from the code), with the metrics and tracing the process set up.
 */
function createSessionWorker(
  settings: Settings,
  policy: TodoPolicy,
  temporal: TemporalConfig,
  agent: Partial<AgentSettings>,
  metrics: WorkerMetricsEndpoint | undefined,
  tracing: Tracing | undefined,
  streamStore: StreamStore,
): Promise<SessionWorker> {
  return createWorker({
    ...policy,
    streamStore,
    streamRetentionMs: settings.streams.retentionMinutes * 60_000,
    temporal,
    cacheDir: settings.paths.cacheDir,
    agent,
    deployment: { name: settings.release.deployment, ...(settings.release.buildId !== undefined ? { buildId: settings.release.buildId } : {}) },
    ...(metrics !== undefined ? { metrics: metrics.registry } : {}),
    ...(tracing !== undefined ? { tracing: tracing.worker } : {}),
  });
}

/**
 * `up`'s worker is the developer's only one: when another build is current (the code changed
 * since the last start), it promotes its own build by the same path as `release promote`, so
 * the sessions move to the code just started instead of waiting for a worker that is gone.
 */
async function promoteOwnBuild(settings: Settings, temporal: TemporalConfig, sessionWorker: SessionWorker): Promise<string> {
  const registration = await sessionWorker.registered();
  if (registration.state === 'current') return describeRegistration(sessionWorker.version, registration);
  const [{ Client, Connection }, { promoteRelease }] = await Promise.all([import('@temporalio/client'), import('../release/release')]);
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const target = releaseTarget(settings, new Client({ connection, namespace: temporal.namespace }));
    const result = await promoteRelease(target, sessionWorker.version.buildId);
    return `build ${result.buildId} replaced build ${registration.current} as the current version (release promote): ${result.moved} of ${result.woken} open sessions moved`;
  } finally {
    await connection.close();
  }
}

/**
 * `agent-sessions up` (`npm start`): a local server (reused when one already answers; none with
 * `TEMPORAL_ADDRESS` set) and a worker, until SIGINT/SIGTERM. The address it chose is given to
 * the worker, the HTTP service and the printed hints; the environment is left as it was. With
 * neither `OPENAI_BASE_URL` nor `OPENAI_API_KEY` set, the worker's agent calls a scripted demo
 * model started here on loopback (see {@link upModel}), and the output says so.
 */
export async function runUp(settings: Settings, options: LocalServerOptions, tracedTo?: (otlpEndpoint: string) => Settings): Promise<void> {
  let policy = requirePolicy(settings.policy);
  let temporal = temporalOptions(settings);
  let server: DevServerHandle | undefined;
  let uiUrl: string | undefined;
  if (!settings.temporal.addressGiven) {
    const address = `127.0.0.1:${options.port}`;
    if (await isServing(address)) {
      process.stderr.write(`reusing the Temporal server that already answers at ${address}\n`);
    } else {
      server = await startLocalServer(settings, options);
      uiUrl = server.uiUrl;
    }
    temporal = { ...temporal, address };
  }
  // The admin tool for this server: the binary that runs it, else one already at hand (nothing is installed for it).
  const temporalCli =
    server?.temporalCli ??
    (await findTemporalCli({ cacheDir: settings.paths.cacheDir, install: false, ...(settings.paths.temporalCliPath !== undefined ? { temporalCliPath: settings.paths.temporalCliPath } : {}) }).catch(() => undefined));
  let http: HttpServer | undefined;
  let model: UpModel | undefined;
  let worker: { sessionWorker: SessionWorker; running: Promise<void> } | undefined;
  let metrics: WorkerMetricsEndpoint | undefined;
  let phoenix: RunningPhoenix | undefined;
  let tracing: Tracing | undefined;
  let streamStore: StreamStore | undefined;
  try {
    if (tracedTo !== undefined) {
      phoenix = await startPhoenix({ python: await findPhoenix({ cacheDir: settings.paths.cacheDir }), dir: join(settings.paths.dataDir, 'phoenix') });
      settings = tracedTo(phoenix.otlpHttpUrl);
      settings = settings.traceUrl !== undefined ? settings : { ...settings, traceUrl: phoenix.traceUrl };
      policy = requirePolicy(settings.policy);
    }
    tracing = await tracingOf(settings, 'agent-sessions');
    // up's worker always serves its metrics: on --metrics-port when given, else on a free port.
    metrics = await installRuntime(settings, settings.metrics.port ?? 0);
    model = await upModel(settings.agent, policy);
    streamStore = openStreamStore(settings.streams);
    const sessionWorker = await createSessionWorker(settings, policy, temporal, model.agent, metrics, tracing, streamStore);
    const running = sessionWorker.run();
    worker = { sessionWorker, running };
    const release = await promoteOwnBuild(settings, temporal, sessionWorker).catch((error: Error) => `the worker's build could not be made current: ${error.message}`);
    // Worker and HTTP service in one process share the store: a reader is woken by the append itself.
    http = await startHttp(settings, temporal, streamStore, tracing);
    // The CLI in another terminal traces too when told where: its `chat` is then the root of the turn.
    const otlp = phoenix !== undefined ? `OTEL_EXPORTER_OTLP_ENDPOINT=${phoenix.otlpHttpUrl} ` : '';
    const env = `${temporal.address === '127.0.0.1:7233' ? '' : `TEMPORAL_ADDRESS=${temporal.address} `}`;
    process.stdout.write(
      [
        'agent-sessions is running.',
        `  Temporal server: ${temporal.address} (namespace ${temporal.namespace})${server ? `, state in ${server.dbFile}, log in ${server.logFile}` : ''}`,
        ...(uiUrl !== undefined ? [`  Temporal Web UI: ${uiUrl}`] : []),
        ...(temporalCli !== undefined ? [`  Temporal CLI: ${temporalCli}  (try: ${temporalCli} workflow show -w demo${temporal.address === '127.0.0.1:7233' ? '' : ` --address ${temporal.address}`})`] : []),
        `  Worker: task queue "${sessionWorker.taskQueue}", allowParallelInProgress=${policy.allowParallelInProgress}`,
        `  The model's words (streams): ${(await streamStore.identity()).location}`,
        `  Release: ${release} (see: npx agent-sessions release status)`,
        ...model.lines,
        `  Dashboard and HTTP API: ${http.url}  (OpenAPI: ${http.url}/openapi.json)`,
        `  Metrics (Prometheus): worker ${metrics?.url ?? 'off'}, HTTP service ${http.url}/metrics`,
        `  MCP (for an agent CLI's plan): ${http.url}/sessions/<id>/mcp, or npx agent-sessions mcp --session <id> on stdio (see docs/mcp.md)`,
        ...(phoenix !== undefined ? phoenixLines(phoenix) : tracing !== undefined ? [`  Traces: to ${tracing.settings.endpoint} as ${tracing.serviceName}`] : []),
        'Try, in another terminal:',
        `  ${env}${otlp}npx agent-sessions chat demo "${model.tryMessage}"   (and watch it on ${http.url}/#/sessions/demo)`,
        `  ${env}npx agent-sessions usage demo`,
        'or drive a list yourself:',
        `  ${env}npx agent-sessions start demo-list`,
        `  ${env}npx agent-sessions write demo-list --json '{"todos":[{"content":"Run lint","status":"in_progress"},{"content":"Fix errors","status":"pending"}]}'`,
        `  ${env}npx agent-sessions todos demo-list`,
        `  curl -s ${http.url}/sessions/demo-list/todos`,
        'Ctrl-C stops everything.',
        '',
      ].join('\n'),
    );
    await Promise.race([untilStopSignal().then(() => sessionWorker.shutdown()), running]);
    await running;
  } finally {
    // Stopped here too when something after its start failed, or the process would not exit.
    if (worker !== undefined) {
      worker.sessionWorker.shutdown();
      await worker.running.catch(() => undefined);
      reportStopped(`the worker (task queue "${worker.sessionWorker.taskQueue}")`);
    }
    if (http !== undefined) {
      await http.close();
      reportStopped(`the HTTP API and dashboard (${http.url})`);
    }
    await streamStore?.close();
    await metrics?.close();
    if (model !== undefined) {
      await model.close();
      if (model.demo) reportStopped('the scripted demo model');
    }
    // The last spans go out before the collector stops.
    await tracing?.shutdown();
    if (phoenix !== undefined) {
      await phoenix.stop();
      reportStopped(`Phoenix (${phoenix.uiUrl}; its traces stay in ${dirname(phoenix.logFile)})`);
    }
    await server?.stop(reportStopped);
  }
}

/** What `up --traces` says about its trace UI. */
function phoenixLines(phoenix: RunningPhoenix): string[] {
  return [
    `  Traces (Arize Phoenix): ${phoenix.uiUrl}  (a turn's trace: ${phoenix.traceUrl}; OTLP/HTTP at ${phoenix.otlpHttpUrl}/v1/traces, log in ${phoenix.logFile})`,
  ];
}
