import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort } from './dev-server';
import { executableName, executableProblem } from './executables';
import { goInstall, moveBuiltFolder } from './go-install';
import { ManagedProcess } from './managed-process';
import { resolveCacheDir } from './temporal-cli';
import { packageRoot } from './temporal-server-config';

/**
 * The Jaeger release `agent-sessions up --traces` runs: Jaeger v2 (all-in-one, an OpenTelemetry
 * Collector with Jaeger's storage and query), whose Go module is `github.com/jaegertracing/jaeger`
 * at v1.75.0 (the v2.12.0 release).
 */
export const JAEGER_VERSION = '1.75.0';

/** Thrown when Jaeger is not cached and cannot be built; the message says what to do. */
export class JaegerUnavailableError extends Error {
  override readonly name = 'JaegerUnavailableError';

  constructor(problem: string, folder: string) {
    super(
      `Jaeger ${JAEGER_VERSION} is not in ${folder} and could not be built: ${problem}. ` +
        'Install Go 1.21 or newer (it fetches the toolchain Jaeger needs from the Go proxy) and run again, ' +
        'or point OTEL_EXPORTER_OTLP_ENDPOINT at a collector of your own instead of --traces.',
    );
  }
}

/**
 * Finds Jaeger in the per-user cache (`<cache>/bin/jaeger-<version>/jaeger`), building it when
 * missing. `go install …/cmd/jaeger@v1.75.0` refuses it (its go.mod has a `replace`), so it is
 * built inside a module of ours, `deploy/jaeger/` (go.mod with the same replace, and go.sum),
 * under a lock, the way the Temporal binaries are.
 *
 * @throws {JaegerUnavailableError} Go is missing or the build failed.
 */
export async function findJaegerBinary(options: { env?: NodeJS.ProcessEnv; cacheDir?: string; output?: NodeJS.WritableStream } = {}): Promise<string> {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? resolveCacheDir(env);
  const dir = join(cacheDir, 'bin', `jaeger-${JAEGER_VERSION}`);
  const binary = join(dir, executableName('jaeger'));
  const problem = async (): Promise<string | undefined> => {
    const missing = await executableProblem(binary);
    return missing ? `${binary}: ${missing}` : undefined;
  };
  if (!(await problem())) return binary;

  const module = join(cacheDir, 'build', `jaeger-${JAEGER_VERSION}`);
  await mkdir(module, { recursive: true });
  for (const file of ['go.mod', 'go.sum', 'tools.go']) await copyFile(join(packageRoot(), 'deploy', 'jaeger', file), join(module, file));
  const scratch = `${dir}.building`;
  const built = await goInstall({
    label: `Jaeger ${JAEGER_VERSION}`,
    packages: [`github.com/jaegertracing/jaeger/cmd/jaeger@v${JAEGER_VERSION}`],
    command: { args: ['build', '-mod=mod', '-o', join(scratch, executableName('jaeger')), 'github.com/jaegertracing/jaeger/cmd/jaeger'], cwd: module },
    minGoVersion: '1.21',
    cacheDir,
    lockName: `jaeger-${JAEGER_VERSION}-install.lock`,
    gobin: scratch,
    target: binary,
    problem,
    place: moveBuiltFolder(scratch, dir),
    reason: `no Jaeger ${JAEGER_VERSION} in the per-user cache`,
    env,
    output: options.output ?? process.stderr,
    lockTimeoutMs: 45 * 60_000,
  });
  if (built.failure !== undefined) throw new JaegerUnavailableError(built.failure, dir);
  return binary;
}

/** Options of {@link startJaeger}. */
export interface JaegerOptions {
  /** The `jaeger` binary ({@link findJaegerBinary}). */
  binary: string;
  /** Where its configuration and log file go. */
  dir: string;
  /** Where its own notices go (that it died); its log goes to `<dir>/jaeger.log`. */
  output?: NodeJS.WritableStream;
  /** Whether it keeps this Node process alive (default true); tests say false. */
  keepsProcessAlive?: boolean;
  /** Most traces it keeps in memory (default 20,000; the oldest are dropped). */
  maxTraces?: number;
  /** Its environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** A running Jaeger on loopback, its traces in memory. */
export interface RunningJaeger {
  /** Its web UI and query API (`/api/traces/{id}`, `/api/services`): `http://127.0.0.1:<port>`. */
  readonly uiUrl: string;
  /** Its OTLP/HTTP receiver (`OTEL_EXPORTER_OTLP_ENDPOINT`): `http://127.0.0.1:<port>`. */
  readonly otlpHttpUrl: string;
  /** Its OTLP/gRPC receiver: `http://127.0.0.1:<port>`. */
  readonly otlpGrpcUrl: string;
  /**
   * Where one trace opens, `{traceId}` for its id (`AGENT_SESSIONS_TRACE_URL`): the UI's trace
   * page, or the query API's JSON of the trace when the UI is the placeholder.
   */
  readonly traceUrl: string;
  /**
   * Whether its web UI is the real one: a build from the Go module proxy carries only Jaeger's
   * placeholder page (the UI's assets are built from the jaeger-ui repository, which no package
   * registry serves); the query API works either way.
   */
  readonly uiAssets: boolean;
  readonly logFile: string;
  readonly pid: number | undefined;
  /** Stops it; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts Jaeger v2 all-in-one on loopback, on free ports, with in-memory storage: an OTLP
 * receiver (HTTP and gRPC), the query API and the UI. Resolves once its query API answers.
 *
 * @throws Error when it exits or does not answer within a minute (the message has its last lines).
 */
export async function startJaeger(options: JaegerOptions): Promise<RunningJaeger> {
  await mkdir(options.dir, { recursive: true });
  const [ui, grpcQuery, otlpGrpc, otlpHttp] = [await findFreePort(), await findFreePort(), await findFreePort(), await findFreePort()];
  const configFile = join(options.dir, 'jaeger.yaml');
  await writeFile(configFile, jaegerConfig({ ui: ui!, grpcQuery: grpcQuery!, otlpGrpc: otlpGrpc!, otlpHttp: otlpHttp! }, options.maxTraces ?? 20_000));
  const logFile = join(options.dir, 'jaeger.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const jaeger = new ManagedProcess({
    name: 'jaeger',
    command: options.binary,
    args: ['--config', configFile],
    env: options.env ?? process.env,
    output: log,
    notices: options.output ?? process.stderr,
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
    killSignal: 'SIGKILL',
    restart: 'no',
    keepsProcessAlive: options.keepsProcessAlive ?? true,
  });
  jaeger.start();
  const uiUrl = `http://127.0.0.1:${ui}`;
  const stop = async (): Promise<void> => {
    await jaeger.stop();
    log.end();
  };
  try {
    await untilAnswering(`${uiUrl}/api/services`, jaeger, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  const home = await fetch(uiUrl).then((response) => response.text()).catch(() => '');
  const uiAssets = home !== '' && !home.includes('This is not the Jaeger UI you are looking for');
  return {
    uiUrl,
    otlpHttpUrl: `http://127.0.0.1:${otlpHttp}`,
    otlpGrpcUrl: `http://127.0.0.1:${otlpGrpc}`,
    traceUrl: uiAssets ? `${uiUrl}/trace/{traceId}` : `${uiUrl}/api/traces/{traceId}`,
    uiAssets,
    logFile,
    pid: jaeger.pid,
    stop,
  };
}

/** The configuration of an all-in-one Jaeger v2 on loopback: OTLP in, memory storage, query out; its own metrics off. */
function jaegerConfig(ports: { ui: number; grpcQuery: number; otlpGrpc: number; otlpHttp: number }, maxTraces: number): string {
  return `# Written by agent-sessions for \`up --traces\`: Jaeger v2 all-in-one on loopback.
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: ${maxTraces}
  jaeger_query:
    # Jaeger traces its own queries by default, to an OTLP collector on localhost:4317 that is not there.
    enable_tracing: false
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${ports.ui}
    grpc:
      endpoint: 127.0.0.1:${ports.grpcQuery}
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${ports.otlpGrpc}
      http:
        endpoint: 127.0.0.1:${ports.otlpHttp}
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`;
}

async function untilAnswering(url: string, process: ManagedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!process.isRunning()) throw new Error(`Jaeger exited before it answered at ${url}. ${process.describeTail()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Jaeger did not answer at ${url} within ${timeoutMs / 1000} s. ${process.describeTail()}`);
    await sleep(200);
  }
}
