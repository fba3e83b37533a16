import { join } from 'node:path';
import { Option, type Command } from 'commander';
import { CLUSTER_PORT_RANGE, clusterPorts } from '../devserver/cluster-ports';
import type { ProductionCluster } from '../devserver/production-cluster';
import { commandSettings } from './command-settings';
import { POLICY_ENV, POLICY_FLAG, requirePolicy, UsageError } from './policy-option';
import { reportStopped } from './report-stopped';

interface ClusterCommandOptions {
  port: number;
  httpPort: number;
  workers: number;
  data?: string;
  allowParallelInProgress?: string;
  tools?: string;
}

/**
 * Adds `agent-sessions cluster`: the production topology of docker-compose.yml (PostgreSQL, the
 * Temporal server on it, N workers, the HTTP service) run on this machine until SIGINT/SIGTERM.
 */
export function addClusterCommand(program: Command): void {
  program
    .command('cluster')
    .description(
      'run the production topology of docker-compose.yml on this machine: PostgreSQL, the Temporal server on it, ' +
        'workers and the HTTP service, until SIGINT/SIGTERM (the data stays for the next start)',
    )
    .addOption(new Option(`${POLICY_FLAG} <true|false>`, `the workers' policy: may several todos be in_progress at once (env ${POLICY_ENV})`))
    .option(
      '--port <port>',
      `Temporal frontend gRPC port (${CLUSTER_PORT_RANGE.min}-${CLUSTER_PORT_RANGE.max}); the cluster's other ports derive from it ` +
        '(services port+1..+10, membership port-300..-294, PostgreSQL port-1800)',
      integer('--port', CLUSTER_PORT_RANGE.min, CLUSTER_PORT_RANGE.max),
      7233,
    )
    .option('--http-port <port>', 'port of the HTTP API and dashboard', integer('--http-port', 1, 65535), 8080)
    .option('--workers <n>', 'number of worker processes (their metrics on --port + 20, + 21, …)', integer('--workers', 1, 64), 2)
    .option('--data <dir>', 'folder that keeps PostgreSQL\'s data between starts (default: data/cluster)')
    .option('--tools <module>', "the workers' own tools: a JavaScript module whose default export lists them (env AGENT_SESSIONS_TOOLS; see docs/tools.md)")
    .action(async (options: ClusterCommandOptions) => runCluster(options));
}

async function runCluster(options: ClusterCommandOptions): Promise<void> {
  const settings = commandSettings({
    ...(options.allowParallelInProgress !== undefined ? { allowParallelInProgress: options.allowParallelInProgress } : {}),
    httpPort: options.httpPort,
    ...(options.tools !== undefined ? { tools: options.tools } : {}),
  });
  const policy = requirePolicy(settings.policy);
  const ports = clusterPorts(options.port);
  if (Object.values(ports).includes(options.httpPort)) {
    throw new UsageError(`--http-port ${options.httpPort} is one of the ports the cluster derives from --port ${options.port}: choose another`);
  }
  // Of the connection settings only the namespace applies: the cluster's address is its own.
  const { namespace } = settings.temporal;
  const { cacheDir, dataDir, temporalCliPath } = settings.paths;

  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stop.signal.aborted) process.stderr.write(`agent-sessions cluster: ${signal} again; still stopping, in order (PostgreSQL last)\n`);
    else stop.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let cluster: ProductionCluster;
    // Loaded here: the cluster's code (and the native worker it starts) is for this command alone.
    const { ClusterStartAbortedError, startProductionCluster } = await import('../devserver/production-cluster');
    try {
      cluster = await startProductionCluster({
        policy,
        port: options.port,
        httpPort: options.httpPort,
        workers: options.workers,
        namespace,
        restart: 'unless-stopped',
        signal: stop.signal,
        dataDir: options.data ?? join(dataDir, 'cluster'),
        cacheDir,
        ...(temporalCliPath !== undefined ? { temporalCliPath } : {}),
        // The workers load the module the settings checked, by its absolute path.
        ...(settings.agent.toolsModule !== undefined ? { env: { ...process.env, AGENT_SESSIONS_TOOLS: settings.agent.toolsModule } } : {}),
      });
    } catch (error) {
      if (error instanceof ClusterStartAbortedError) {
        process.stderr.write(`agent-sessions cluster: ${error.message}\n`);
        return;
      }
      throw error;
    }
    process.stdout.write(summary(cluster, policy.allowParallelInProgress));
    if (!stop.signal.aborted) await new Promise((done) => stop.signal.addEventListener('abort', done, { once: true }));
    // One line per part that stopped, and nothing else: the server's own chatter is in its log.
    await cluster.stop(reportStopped);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

function summary(cluster: ProductionCluster, allowParallelInProgress: boolean): string {
  const t = cluster.timings;
  const env = `TEMPORAL_ADDRESS=${cluster.address}${cluster.namespace === 'default' ? '' : ` TEMPORAL_NAMESPACE=${cluster.namespace}`}`;
  return [
    `agent-sessions cluster is running (${cluster.created ? 'new' : 'existing'} data in ${cluster.dataDir}).`,
    `  PostgreSQL:      127.0.0.1:${cluster.ports.postgres}, databases temporal and temporal_visibility ` +
      `(schemas ${cluster.schemas.map((s) => s.to).join(' and ')}); log in ${cluster.logFiles.postgres}`,
    `  Temporal server: ${cluster.address} (namespace ${cluster.namespace}), all services, persistence and visibility on PostgreSQL; log in ${cluster.logFiles.temporal}`,
    `  Workers:         ${cluster.workers.length}, allowParallelInProgress=${allowParallelInProgress}`,
    ...(cluster.httpUrl !== undefined ? [`  Dashboard and HTTP API: ${cluster.httpUrl}`] : []),
    `  Metrics (Prometheus): ${cluster.workerMetricsUrls.map((url, i) => `worker-${i + 1} ${url}`).join(', ')}` +
      `${cluster.httpUrl !== undefined ? `, HTTP service ${cluster.httpUrl}/metrics` : ''}`,
    `  Started in ${seconds(t.total)}: binaries ${seconds(t.binaries)}, PostgreSQL ${seconds(t.postgres)}, schemas ${seconds(t.schemas)}, ` +
      `Temporal ${seconds(t.temporal)}, namespace ${seconds(t.namespace)}, workers ${seconds(t.workers)}, HTTP ${seconds(t.http)}`,
    'Try, in another terminal:',
    `  ${env} npx agent-sessions write demo --json '{"todos":[{"content":"Run lint","status":"in_progress"}]}'`,
    `  ${env} npx agent-sessions todos demo`,
    `  temporal operator cluster describe --address ${cluster.address}`,
    'A process that dies is restarted, as docker compose does; Ctrl-C stops everything and keeps the data.',
    '',
  ].join('\n');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A commander parser for an integer flag within [min, max], refusing anything else by the flag's name. */
function integer(flag: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const parsed = /^\d{1,6}$/.test(value) ? Number(value) : NaN;
    if (!(parsed >= min && parsed <= max)) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
    return parsed;
  };
}
