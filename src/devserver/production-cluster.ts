import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TodoPolicy } from '../todo';
import { clusterPorts, workerMetricsPort, type ClusterPorts } from './cluster-ports';
import { SESSION_SEARCH_ATTRIBUTES } from '../session/search-attributes';
import { bindProblem, defaultDataDir, isServing, type SearchAttributeTypeName } from './dev-server';
import { ManagedProcess, describeExit } from './managed-process';
import { startPostgres, type RunningPostgres } from './postgres-cluster';
import { registerNamespace } from './temporal-namespace';
import { findTemporalServerBinaries } from './temporal-server-binaries';
import { packageRoot, temporalServerArgs, temporalServerEnv } from './temporal-server-config';
import { ensureStreamDatabase } from './stream-database';
import { ensureTemporalSchemas, type SchemaChange } from './temporal-sql-schema';

/** Options for {@link startProductionCluster}; only the policy is required. */
export interface ProductionClusterOptions {
  /** The workers' parallel policy: a deployment choice with no default (DESIGN §3). */
  policy: TodoPolicy;
  /** The Temporal frontend's gRPC port; every other port is derived from it (see {@link clusterPorts}). Defaults to 7233. */
  port?: number;
  /** Port of the HTTP API and dashboard, or `false` for none. Defaults to 8080. */
  httpPort?: number | false;
  /** How many worker processes. Defaults to 2. */
  workers?: number;
  /** The folder that keeps the cluster's data between starts. Defaults to `<data folder>/cluster`. */
  dataDir?: string;
  /** The namespace of the sessions; created when missing. Defaults to `default`. */
  namespace?: string;
  /** Custom search attributes the namespace must have (SQL visibility limits apply: see `SQL_SEARCH_ATTRIBUTE_LIMITS`). */
  searchAttributes?: Readonly<Record<string, SearchAttributeTypeName>>;
  /**
   * `'unless-stopped'` restarts any process of the cluster that dies by itself, as docker compose
   * does with the same policy; `'no'` (the default) leaves it dead, for tests that restart it themselves.
   */
  restart?: 'unless-stopped' | 'no';
  /**
   * Where the progress lines, the workers' and the HTTP service's prefixed output, and the notices
   * of a process that died go. Defaults to `process.stderr`. The Temporal server's and PostgreSQL's
   * own output goes to {@link ProductionCluster.logFiles}.
   */
  output?: NodeJS.WritableStream;
  /** Environment of the processes it starts and of the binary lookups (`PATH`), and of the paths not given here. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder (the built binaries). Defaults to the one `env` names. */
  cacheDir?: string;
  /** Ignored: the cluster registers its namespace over gRPC and needs no Temporal CLI. Kept so existing callers compile. */
  temporalCliPath?: string;
  /** Aborting it (Ctrl-C during a start) stops whatever had started and rejects with {@link ClusterStartAbortedError}. */
  signal?: AbortSignal;
}

/** How long each step of a start took, in milliseconds. */
export interface ClusterTimings {
  binaries: number;
  postgres: number;
  schemas: number;
  temporal: number;
  namespace: number;
  workers: number;
  http: number;
  total: number;
}

/** A running production topology, from {@link startProductionCluster}. */
export interface ProductionCluster {
  /** `127.0.0.1:<port>`: give it to every command as `TEMPORAL_ADDRESS`. */
  readonly address: string;
  readonly namespace: string;
  /** `http://127.0.0.1:<httpPort>`, or `undefined` without the HTTP service. */
  readonly httpUrl: string | undefined;
  readonly dataDir: string;
  readonly ports: ClusterPorts;
  /** `true` when this start created the PostgreSQL cluster (first start on this data folder). */
  readonly created: boolean;
  /** What the schema step did to each database. */
  readonly schemas: readonly SchemaChange[];
  /** The stream store's database (its own, with its own user), as workers and the HTTP service are given it (`AGENT_SESSIONS_STREAM_STORE`). */
  readonly streamStoreUrl: string;
  readonly postgres: RunningPostgres;
  readonly temporal: ManagedProcess;
  readonly workers: readonly ManagedProcess[];
  /** Each worker's metrics endpoint (`temporal_*` and the agent loop's), in worker order: `http://127.0.0.1:<port + 20 + i>/metrics`. */
  readonly workerMetricsUrls: readonly string[];
  readonly http: ManagedProcess | undefined;
  readonly timings: ClusterTimings;
  /**
   * Where the Temporal server's and PostgreSQL's own output goes (`<dataDir>/temporal.log`,
   * `<dataDir>/postgres.log`), so that the command's output is the cluster's own lines.
   */
  readonly logFiles: { temporal: string; postgres: string };
  /** Every process of the cluster, in start order. */
  processes(): ManagedProcess[];
  /**
   * Stops the HTTP service, the workers, the Temporal server and PostgreSQL, in that order; the
   * data stays. Safe to call twice. `onStopped` is told of each part once it has stopped, in
   * words for a person (`the Temporal server (its log: …)`), by the first call only.
   */
  stop(onStopped?: (component: string) => void): Promise<void>;
}

/** Thrown when the cluster cannot start; the message says which part and why. */
export class ProductionClusterError extends Error {
  override readonly name: string = 'ProductionClusterError';
}

/** Thrown by {@link startProductionCluster} when its `signal` was aborted; what had started is stopped. */
export class ClusterStartAbortedError extends ProductionClusterError {
  override readonly name = 'ClusterStartAbortedError';
}

/**
 * Brings up, on this machine, the topology docker-compose.yml describes: PostgreSQL (created in
 * the data folder on the first start), both Temporal schemas created or upgraded with
 * `temporal-sql-tool`, the Temporal server (TEMPORAL_SERVER_VERSION, all services) with the configuration
 * docker-compose.yml mounts (`deploy/temporal/production.yaml`), the namespace and search
 * attributes, `workers` worker processes and the HTTP service — everything on 127.0.0.1. A later
 * start on the same data folder reuses the data; only schema upgrades run.
 *
 * @throws {RangeError} a port or the worker count is out of range.
 * @throws {ProductionClusterError} a port is taken.
 * @throws {TemporalServerUnavailableError | TemporalCliNotFoundError} a binary is missing and cannot be built.
 * @throws {PostgresClusterError | TemporalSchemaError | NamespaceRegistrationError} a step failed;
 * whatever had started is stopped again.
 *
 * @example
 * const cluster = await startProductionCluster({ policy: { allowParallelInProgress: true }, port: 7333, httpPort: 8090 });
 * // TEMPORAL_ADDRESS=127.0.0.1:7333 npx agent-sessions todos demo
 * await cluster.stop();
 */
export async function startProductionCluster(options: ProductionClusterOptions): Promise<ProductionCluster> {
  const begun = Date.now();
  const env = options.env ?? process.env;
  const output = options.output ?? process.stderr;
  const restart = options.restart ?? 'no';
  const ports = clusterPorts(options.port ?? 7233);
  const httpPort = options.httpPort ?? 8080;
  const workerCount = options.workers ?? 2;
  if (!Number.isInteger(workerCount) || workerCount < 0 || workerCount > 64) {
    throw new RangeError(`the number of workers must be an integer from 0 to 64, got ${workerCount}`);
  }
  const namespace = options.namespace ?? 'default';
  const dataDir = options.dataDir ?? join(defaultDataDir(env), 'cluster');
  const paths = options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {};
  const address = `127.0.0.1:${ports.frontendGrpc}`;
  const timings: ClusterTimings = { binaries: 0, postgres: 0, schemas: 0, temporal: 0, namespace: 0, workers: 0, http: 0, total: 0 };
  const interrupted = (): ClusterStartAbortedError =>
    new ClusterStartAbortedError(`the start was interrupted (${String(options.signal?.reason)}); what had started is stopped`);
  const aborted = new Promise<never>((_, reject) => {
    if (options.signal?.aborted) reject(interrupted());
    else options.signal?.addEventListener('abort', () => reject(interrupted()), { once: true });
  });
  // Without a listener an abort that comes after the start would be an unhandled rejection.
  aborted.catch(() => undefined);
  /**
   * Times one step. An abort ends an interruptible step at once (its processes are already in
   * `started`, so they are stopped); a step that starts something not yet tracked (PostgreSQL)
   * runs to its end and the abort is noticed after it.
   */
  const step = async <T>(name: keyof ClusterTimings, run: () => Promise<T>, interruptible = true): Promise<T> => {
    const began = Date.now();
    try {
      const result = await (interruptible ? Promise.race([run(), aborted]) : run());
      if (options.signal?.aborted) throw interrupted();
      return result;
    } finally {
      timings[name] = Date.now() - began;
    }
  };
  const progress = (line: string): void => void output.write(`agent-sessions cluster: ${line}\n`);

  const metricsPorts = Array.from({ length: workerCount }, (_, i) => workerMetricsPort(ports.frontendGrpc, i));
  await assertPortsFree(ports, httpPort, metricsPorts, address);
  // The namespace is registered over gRPC: the cluster needs no Temporal CLI.
  const server = await step('binaries', () => findTemporalServerBinaries({ env, output, ...paths }));

  // The server's and PostgreSQL's own output (their shutdown chatter included) goes to log files.
  mkdirSync(dataDir, { recursive: true });
  const logFiles = { temporal: join(dataDir, 'temporal.log'), postgres: join(dataDir, 'postgres.log') };
  const logs: Record<keyof typeof logFiles, WriteStream> = {
    temporal: createWriteStream(logFiles.temporal, { flags: 'a' }),
    postgres: createWriteStream(logFiles.postgres, { flags: 'a' }),
  };
  const started: Array<{ component: string; stop(): Promise<unknown> }> = [];
  const stopAll = async (onStopped?: (component: string) => void): Promise<void> => {
    // Reverse start order: nothing loses what it depends on while it is still running.
    for (const part of started.splice(0).reverse()) {
      await part.stop();
      onStopped?.(part.component);
    }
    await Promise.all(Object.values(logs).map((log) => new Promise<void>((done) => log.end(done))));
  };
  try {
    progress(`starting PostgreSQL on 127.0.0.1:${ports.postgres} (data in ${join(dataDir, 'postgres')})`);
    const postgres = await step(
      'postgres',
      async () => {
        const running = await startPostgres({ dir: join(dataDir, 'postgres'), port: ports.postgres, output: logs.postgres, notices: output, restart, env });
        started.push({ component: `PostgreSQL (its log: ${logFiles.postgres}; the data stays in ${dataDir})`, stop: () => running.stop() });
        return running;
      },
      false,
    );

    const schemas = await step('schemas', () => ensureTemporalSchemas(server.sqlTool, postgres), false);
    const streamStoreUrl = await ensureStreamDatabase(postgres);
    for (const change of schemas) {
      progress(
        change.from === change.to
          ? `schema of ${change.database} is current (${change.to})`
          : `schema of ${change.database}: ${change.from ?? 'none'} -> ${change.to}`,
      );
    }

    progress(`starting the Temporal server ${server.version} at ${address}`);
    const temporal = new ManagedProcess({
      name: 'temporal',
      command: server.server,
      args: temporalServerArgs(),
      env: temporalServerEnv(ports, postgres),
      output: logs.temporal,
      notices: output,
      formatLine: compactServerLog,
      stopSignal: 'SIGTERM',
      stopTimeoutMs: 30_000,
      killSignal: 'SIGKILL',
      restart,
    });
    temporal.start();
    started.push({ component: `the Temporal server (its log: ${logFiles.temporal})`, stop: () => temporal.stop() });
    // The system namespace exists on every Temporal server: once it is served, the frontend and persistence work.
    await step('temporal', () => untilServing(temporal, address, 'temporal-system', 120_000));

    await step('namespace', async () => {
      const registered = await registerNamespace({ address, namespace, searchAttributes: { ...SESSION_SEARCH_ATTRIBUTES, ...options.searchAttributes } });
      if (registered.createdNamespace) progress(`registered namespace ${namespace}`);
      if (registered.addedSearchAttributes.length > 0) progress(`added search attributes ${registered.addedSearchAttributes.join(', ')}`);
      await untilServing(temporal, address, namespace, 60_000);
    });

    const childEnv = { ...clientEnv(env, address, namespace), AGENT_SESSIONS_STREAM_STORE: streamStoreUrl };
    const bin = join(packageRoot(), 'bin', 'agent-sessions.js');
    const policy = String(options.policy.allowParallelInProgress);
    const node = (name: string, args: string[]): ManagedProcess =>
      new ManagedProcess({
        name,
        command: process.execPath,
        args: [bin, ...args],
        env: childEnv,
        output,
        stopSignal: 'SIGTERM',
        stopTimeoutMs: 30_000,
        killSignal: 'SIGKILL',
        restart,
      });

    const workers = Array.from({ length: workerCount }, (_, i) =>
      node(`worker-${i + 1}`, ['worker', '--allow-parallel-in-progress', policy, '--metrics-port', String(metricsPorts[i])]),
    );
    await step('workers', async () => {
      const ready = workers.map((worker) => {
        const polling = worker.waitForLine(/^worker polling task queue/, 180_000);
        worker.start();
        started.push({ component: worker.name, stop: () => worker.stop() });
        return polling;
      });
      await Promise.all(ready);
    });

    const http =
      httpPort === false ? undefined : node('http', ['serve', '--port', String(httpPort), '--allow-parallel-in-progress', policy]);
    if (http) {
      await step('http', async () => {
        const listening = http.waitForLine(/^HTTP API and dashboard at /, 60_000);
        http.start();
        started.push({ component: 'the HTTP service', stop: () => http.stop() });
        await listening;
      });
    }
    timings.total = Date.now() - begun;

    const processes = [postgres.process, temporal, ...workers, ...(http ? [http] : [])];
    let stopping: Promise<void> | undefined;
    return {
      address,
      namespace,
      httpUrl: httpPort === false ? undefined : `http://127.0.0.1:${httpPort}`,
      dataDir,
      ports,
      created: postgres.created,
      schemas,
      streamStoreUrl,
      postgres,
      temporal,
      workers,
      workerMetricsUrls: metricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`),
      http,
      timings,
      logFiles,
      processes: () => [...processes],
      stop: (onStopped) => (stopping ??= stopAll(onStopped)),
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Refuses before anything starts when a port of the cluster is taken, naming the port and its role. */
async function assertPortsFree(ports: ClusterPorts, httpPort: number | false, metricsPorts: readonly number[], address: string): Promise<void> {
  const roles: Array<[string, number]> = [
    ['the Temporal frontend (--port)', ports.frontendGrpc],
    ["the Temporal frontend's HTTP API (--port + 10)", ports.frontendHttp],
    ['Temporal membership (--port - 300 … - 294)', ports.frontendMembership],
    ['Temporal membership (--port - 300 … - 294)', ports.historyMembership],
    ['Temporal membership (--port - 300 … - 294)', ports.matchingMembership],
    ['Temporal membership (--port - 300 … - 294)', ports.workerMembership],
    ['the Temporal history service (--port + 1)', ports.historyGrpc],
    ['the Temporal matching service (--port + 2)', ports.matchingGrpc],
    ['the Temporal worker service (--port + 6)', ports.workerGrpc],
    ['PostgreSQL (--port - 1800)', ports.postgres],
  ];
  if (httpPort !== false) roles.push(['the HTTP API and dashboard (--http-port)', httpPort]);
  metricsPorts.forEach((port, i) => roles.push([`worker-${i + 1}'s metrics (--port + ${20 + i})`, port]));
  for (const [role, port] of roles) {
    const problem = await bindProblem('127.0.0.1', port);
    if (!problem) continue;
    const temporal = port === ports.frontendGrpc && (await isServing(address, 'temporal-system', 1_000));
    throw new ProductionClusterError(
      `cannot start the cluster: port ${port} on 127.0.0.1, for ${role}, is not available (${problem}). ` +
        (temporal
          ? `A Temporal server already answers at ${address} (a dev server or another cluster): use it, or choose another --port.`
          : port === httpPort
            ? 'Stop whatever listens there or choose another --http-port.'
            : 'Stop whatever listens there or choose another --port (every port of the cluster but --http-port is derived from it).'),
    );
  }
}

/**
 * Polls until the frontend serves `namespace`. Fails at once when the server exits (and is not
 * being restarted), or after `timeoutMs`, with the server's last output.
 */
async function untilServing(temporal: ManagedProcess, address: string, namespace: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: string | undefined;
  const unsubscribe = temporal.onExit((e) => (exit = describeExit(e)));
  try {
    for (;;) {
      if (await isServing(address, namespace, 2_000)) return;
      if (exit !== undefined && !temporal.isRunning()) {
        throw new ProductionClusterError(`the Temporal server exited with ${exit} before serving at ${address}. ${temporal.describeTail()}`);
      }
      if (Date.now() > deadline) {
        throw new ProductionClusterError(
          `the Temporal server did not serve namespace ${namespace} at ${address} within ${Math.round(timeoutMs / 1000)}s. ${temporal.describeTail()}`,
        );
      }
      await sleep(250);
    }
  } finally {
    unsubscribe();
  }
}

/**
 * The environment of the workers and the HTTP service: the caller's, pointed at this cluster.
 * TLS and API-key settings are dropped because the local cluster speaks plain gRPC; a Temporal
 * Cloud key in the shell must not be sent to it, nor make the workers fail on TLS.
 */
function clientEnv(env: NodeJS.ProcessEnv, address: string, namespace: string): NodeJS.ProcessEnv {
  const child: NodeJS.ProcessEnv = { ...env, TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace };
  for (const name of ['TEMPORAL_API_KEY', 'TEMPORAL_TLS', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_CA', 'TEMPORAL_TLS_SERVER_NAME']) {
    delete child[name];
  }
  return child;
}

/** Fields of the server's JSON log lines that are shown; the rest (stack traces, source lines) is dropped. */
const SHOWN_LOG_FIELDS = ['service', 'operation', 'wf-namespace', 'address', 'component'];

/**
 * Shortens one line of the Temporal server's JSON log to `level msg: error (field=value …)`, so
 * the forwarded output and the tail in an error message stay readable; other lines pass unchanged.
 */
function compactServerLog(line: string): string {
  if (!line.startsWith('{')) return line;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const fields = SHOWN_LOG_FIELDS.filter((key) => entry[key] !== undefined).map((key) => `${key}=${String(entry[key])}`);
  const error = entry['error'] !== undefined ? `: ${String(entry['error'])}` : '';
  return `${String(entry['level'] ?? 'log').toUpperCase()} ${String(entry['msg'] ?? '')}${error}${fields.length > 0 ? ` (${fields.join(' ')})` : ''}`;
}
