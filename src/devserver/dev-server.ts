import { setTimeout as sleep } from 'node:timers/promises';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect as connectHttp2 } from 'node:http2';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import type * as Testing from '@temporalio/testing';
import { Connection } from '@temporalio/client';
import { defaultDataDir, resolveCacheDir } from '../config/paths';
import { SESSION_SEARCH_ATTRIBUTES } from '../session/search-attributes';
import { TemporalCliNotFoundError, findTemporalCli, MIN_GO_VERSION } from './temporal-cli';
import { SourcesTriedError } from './executables';

/** The search attribute types the dev server accepts on `--search-attribute`. */
export type SearchAttributeTypeName = 'Keyword' | 'Int' | 'Bool' | 'Datetime' | 'Text' | 'Double' | 'KeywordList';

/** Options for {@link startDevServer}. Every field has a default. */
export interface DevServerOptions {
  /** Frontend gRPC port. Defaults to 7233. */
  port?: number;
  /** Web UI port, or `false` for no UI. Defaults to `port + 1000`. */
  uiPort?: number | false;
  /** SQLite file holding the server's state. Defaults to `<dataDir>/temporal.sqlite`; its folder is created. */
  dbFile?: string;
  /** Address to bind. Defaults to `127.0.0.1`. */
  ip?: string;
  /** Namespace that must be served before the server counts as started; created if missing. Defaults to `'default'`. */
  namespace?: string;
  /** Server log level: `debug`, `info`, `warn`, `error` or `never`. Defaults to `'warn'`. */
  logLevel?: string;
  /** Dynamic config overrides, each passed as `--dynamic-config-value key=<JSON value>`. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Search attributes to register besides the sessions' own (always declared), each passed as `--search-attribute name=Type`. */
  searchAttributes?: Record<string, SearchAttributeTypeName>;
  /**
   * What happens to the server's output: `'inherit'` prints it (the default), `'ignore'` drops it,
   * `'pipe'` exposes it on the handle's `stdout` / `stderr`. The last lines of stderr are always
   * kept to explain a failed start.
   */
  stdio?: 'inherit' | 'ignore' | 'pipe';
  /** How long to wait for the frontend to serve the namespace. Defaults to 60 seconds. */
  startTimeoutMs?: number;
  /** Environment of the server process and the binary lookup (`PATH`), and of the paths not given here. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder (the cached binary, the SDK's download). Defaults to the one `env` names. */
  cacheDir?: string;
  /** A `temporal` binary chosen explicitly. Defaults to `env`'s `TEMPORAL_CLI_PATH`. */
  temporalCliPath?: string;
}

/** A running local Temporal server, returned by {@link startDevServer}. */
export interface DevServerHandle {
  /** `host:port` of the frontend, ready for `Connection.connect({ address })`. */
  readonly address: string;
  /** The namespace that was checked to be served. */
  readonly namespace: string;
  /** Web UI URL, or `undefined` when started headless. */
  readonly uiUrl: string | undefined;
  /** Absolute path of the SQLite file holding the server's state. */
  readonly dbFile: string;
  /** Process id of the server, or `undefined` when it runs under the SDK's download fallback. */
  readonly pid: number | undefined;
  /** Where the server binary came from: the Temporal CLI found by `findTemporalCli`, or the SDK's download. */
  readonly source: 'temporal-cli' | 'sdk-download';
  /** The server's stdout when started with `stdio: 'pipe'`, else `null`. Read it, or the server may block on a full pipe. */
  readonly stdout: Readable | null;
  /** The server's stderr when started with `stdio: 'pipe'`, else `null`; already flowing, so it yields output from when you listen. */
  readonly stderr: Readable | null;
  /** Settles when the server exits: its exit code, or `null` when a signal ended it. Never rejects. */
  readonly exited: Promise<number | null>;
  /** Stops the server: SIGTERM, then SIGKILL if it has not exited after 10 seconds. Safe to call twice. */
  stop(): Promise<void>;
}

/**
 * Thrown by {@link startDevServer} when the server process exits before serving, or does not
 * serve within the start timeout. `exitCode` is `undefined` on a timeout; `stderrTail` holds the
 * server's last stderr lines.
 */
export class DevServerStartError extends Error {
  override readonly name = 'DevServerStartError';
  /** Exit code of the server process (`null` if a signal ended it, `undefined` if it was still running). */
  readonly exitCode: number | null | undefined;
  /** The server's last stderr lines. */
  readonly stderrTail: readonly string[];

  constructor(message: string, exitCode: number | null | undefined, stderrTail: readonly string[]) {
    super(message);
    this.exitCode = exitCode;
    this.stderrTail = stderrTail;
  }
}

const SERVER_ADVICE =
  `Install Go ${MIN_GO_VERSION} or newer (https://go.dev/dl/) so the Temporal CLI can be built, ` +
  'set TEMPORAL_CLI_PATH to a temporal binary, or set TEMPORAL_ADDRESS to use a server that is already running.';

/**
 * Thrown by {@link startDevServer} when no server binary could be found, installed or
 * downloaded. `attempts` lists every source tried and why it failed.
 */
export class DevServerUnavailableError extends SourcesTriedError {
  override readonly name = 'DevServerUnavailableError';

  constructor(attempts: readonly string[]) {
    super('Could not start a local Temporal server: no server binary was available.', attempts, SERVER_ADVICE);
  }
}

export { defaultDataDir } from '../config/paths';

/**
 * Starts `temporal server start-dev` with its state in a SQLite file and resolves once the
 * frontend serves the namespace. The binary comes from {@link findTemporalCli} (which may build
 * it); when none can be had, the `@temporalio/testing` download is tried.
 *
 * @throws {TemporalCliPathError} `TEMPORAL_CLI_PATH` is set but is not an executable file.
 * @throws {DevServerStartError} a port is taken, the server exited before serving, or it did not serve in time.
 * @throws {DevServerUnavailableError} no binary could be found, built or downloaded.
 *
 * @example
 * const server = await startDevServer({ port: 7233 });
 * const connection = await Connection.connect({ address: server.address });
 * // …
 * await server.stop();
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServerHandle> {
  const settings = resolveSettings(options);
  mkdirSync(dirname(settings.dbFile), { recursive: true });

  let binary: string;
  try {
    binary = await findTemporalCli({
      env: settings.env,
      cacheDir: settings.cacheDir,
      ...(options.temporalCliPath !== undefined ? { temporalCliPath: options.temporalCliPath } : {}),
    });
  } catch (error) {
    if (!(error instanceof TemporalCliNotFoundError)) throw error;
    return startWithSdkDownload(settings, error.attempts);
  }
  return startWithCli(binary, settings);
}

/**
 * Resolves `true` when a Temporal frontend at `address` answers and serves `namespace`, within
 * `timeoutMs`. Never throws. Use it to reuse a server that is already running.
 */
export async function isServing(address: string, namespace = 'default', timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  // A gRPC client aimed at a port that accepts but never speaks HTTP/2 keeps its socket open
  // after close() and so keeps the process alive; a plain HTTP/2 handshake can be torn down.
  if (!(await speaksHttp2(address, timeoutMs))) return false;
  const remaining = Math.max(deadline - Date.now(), 100);
  const connection = Connection.lazy({ address, connectTimeout: remaining });
  try {
    await connection.ensureConnected();
    await connection.withDeadline(Math.max(deadline, Date.now() + 100), () =>
      connection.workflowService.describeNamespace({ namespace }),
    );
    return true;
  } catch {
    return false;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

function speaksHttp2(address: string, timeoutMs: number): Promise<boolean> {
  return new Promise((done) => {
    const session = connectHttp2(`http://${address}`);
    const finish = (answer: boolean): void => {
      clearTimeout(timer);
      session.destroy();
      done(answer);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    session.once('remoteSettings', () => finish(true));
    session.once('error', () => finish(false));
  });
}

/**
 * Resolves to a TCP port that was free on `host` a moment ago (the OS picks it). Meant for
 * tests; another process may take the port before it is used.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.unref();
    server.once('error', fail);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : undefined;
      server.close(() => (port === undefined ? fail(new Error(`could not read the port bound on ${host}`)) : done(port)));
    });
  });
}

/** Every option of {@link DevServerOptions} with its default applied. */
export interface DevServerSettings {
  port: number;
  uiPort: number | false;
  dbFile: string;
  ip: string;
  namespace: string;
  logLevel: string;
  dynamicConfig: Record<string, string | number | boolean>;
  searchAttributes: Record<string, SearchAttributeTypeName>;
  stdio: 'inherit' | 'ignore' | 'pipe';
  startTimeoutMs: number;
  env: NodeJS.ProcessEnv;
  cacheDir: string;
}

function resolveSettings(options: DevServerOptions): DevServerSettings {
  const env = options.env ?? process.env;
  const port = options.port ?? 7233;
  return {
    port,
    uiPort: options.uiPort ?? port + 1000,
    dbFile: resolve(options.dbFile ?? join(defaultDataDir(env), 'temporal.sqlite')),
    ip: options.ip ?? '127.0.0.1',
    namespace: options.namespace ?? 'default',
    logLevel: options.logLevel ?? 'warn',
    dynamicConfig: options.dynamicConfig ?? {},
    // The sessions index themselves with these: every dev server declares them.
    searchAttributes: { ...SESSION_SEARCH_ATTRIBUTES, ...options.searchAttributes },
    stdio: options.stdio ?? 'inherit',
    startTimeoutMs: options.startTimeoutMs ?? 60_000,
    env,
    cacheDir: options.cacheDir ?? resolveCacheDir(env),
  };
}

/**
 * The arguments after the binary for `temporal server start-dev` with these settings. Dynamic
 * config values are JSON-encoded, as the CLI requires (`key="text"`, `key=true`, `key=3`).
 */
export function startDevArgs(settings: Omit<DevServerSettings, 'stdio' | 'startTimeoutMs' | 'env' | 'cacheDir'>): string[] {
  const args = ['server', 'start-dev', '--ip', settings.ip, '--port', String(settings.port)];
  args.push('--db-filename', settings.dbFile, '--log-level', settings.logLevel);
  if (settings.uiPort === false) args.push('--headless');
  else args.push('--ui-port', String(settings.uiPort));
  // "default" always exists; naming it again is harmless but noisy.
  if (settings.namespace !== 'default') args.push('--namespace', settings.namespace);
  return [...args, ...registrationArgs(settings)];
}

function registrationArgs(settings: Pick<DevServerSettings, 'dynamicConfig' | 'searchAttributes'>): string[] {
  const args: string[] = [];
  for (const [key, value] of Object.entries(settings.dynamicConfig)) {
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  for (const [name, type] of Object.entries(settings.searchAttributes)) {
    args.push('--search-attribute', `${name}=${type}`);
  }
  return args;
}

async function startWithCli(binary: string, settings: DevServerSettings): Promise<DevServerHandle> {
  const address = hostPort(connectHost(settings.ip), settings.port);
  // Probing a port that another server already answers on would mistake that server for ours.
  await assertPortsFree(settings, address);
  const child = spawn(binary, startDevArgs(settings), {
    env: settings.env,
    stdio: ['ignore', settings.stdio, 'pipe'],
  });

  const stderrTail = keepTail(child, settings.stdio);
  const exited = new Promise<number | null>((done) => {
    child.once('exit', (code) => done(code));
    // spawn failed (e.g. EACCES): there will be no 'exit' event.
    child.once('error', () => done(child.exitCode));
  });
  const spawnError = new Promise<Error>((done) => child.once('error', done));
  const stopOnParentExit = (): void => {
    child.kill('SIGTERM');
  };
  process.once('exit', stopOnParentExit);
  void exited.then(() => process.removeListener('exit', stopOnParentExit));

  const stop = stopper(child, exited);
  try {
    await waitUntilServing({
      address,
      namespace: settings.namespace,
      timeoutMs: settings.startTimeoutMs,
      exited,
      spawnError,
      binary,
      stderrTail,
      port: settings.port,
    });
  } catch (error) {
    await stop();
    throw error;
  }

  const piped = settings.stdio === 'pipe';
  return {
    address,
    namespace: settings.namespace,
    uiUrl: settings.uiPort === false ? undefined : `http://${hostPort(connectHost(settings.ip), settings.uiPort)}`,
    dbFile: settings.dbFile,
    pid: child.pid,
    source: 'temporal-cli',
    stdout: piped ? child.stdout : null,
    stderr: piped ? child.stderr : null,
    exited,
    stop,
  };
}

async function assertPortsFree(settings: DevServerSettings, address: string): Promise<void> {
  const ports: Array<[string, number]> = [['port', settings.port]];
  if (settings.uiPort !== false) ports.push(['UI port', settings.uiPort]);
  for (const [label, port] of ports) {
    const problem = await bindProblem(settings.ip, port);
    if (!problem) continue;
    const temporal = label === 'port' && (await isServing(address, settings.namespace, 1_000));
    const advice = temporal
      ? `A Temporal server already serves namespace "${settings.namespace}" at ${address}: reuse it (connect to that address) or choose another port.`
      : problem === 'EADDRINUSE'
        ? `Stop whatever listens there or choose another ${label}.`
        : problem === 'EADDRNOTAVAIL'
          ? `${settings.ip} is not an address of this machine: choose another ip (127.0.0.1 by default).`
          : `Choose another ${label} (ports below 1024 need privileges).`;
    throw new DevServerStartError(
      `Cannot start the Temporal dev server: ${label} ${port} on ${settings.ip} is not available (${problem}). ${advice}`,
      undefined,
      [],
    );
  }
}

/** Says why `port` cannot be bound on `host` (`EADDRINUSE`, …), or `undefined` when it can. */
export function bindProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => done(error.code ?? error.message));
    server.listen({ port, host, exclusive: true }, () => server.close(() => done(undefined)));
  });
}

interface WaitOptions {
  address: string;
  namespace: string;
  timeoutMs: number;
  exited: Promise<number | null>;
  spawnError: Promise<Error>;
  binary: string;
  stderrTail: string[];
  port: number;
}

async function waitUntilServing(wait: WaitOptions): Promise<void> {
  const deadline = Date.now() + wait.timeoutMs;
  let outcome: { kind: 'exit'; code: number | null } | { kind: 'error'; error: Error } | undefined;
  void wait.exited.then((code) => (outcome ??= { kind: 'exit', code }));
  void wait.spawnError.then((error) => (outcome = { kind: 'error', error }));

  for (;;) {
    if (outcome?.kind === 'error') {
      throw new DevServerStartError(
        `Could not run ${wait.binary}: ${outcome.error.message}. Check that it is a temporal binary for this machine, ` +
          'or set TEMPORAL_CLI_PATH to one.',
        undefined,
        wait.stderrTail,
      );
    }
    if (outcome?.kind === 'exit') throw earlyExitError(wait, outcome.code);
    if (await isServing(wait.address, wait.namespace, 1_000)) return;
    if (Date.now() > deadline) {
      throw new DevServerStartError(
        `The Temporal dev server (${wait.binary}) did not serve namespace "${wait.namespace}" at ${wait.address} ` +
          `within ${Math.round(wait.timeoutMs / 1000)}s. ${describeTail(wait.stderrTail)}` +
          'Start it with stdio: "inherit" to see its log, or raise startTimeoutMs on a slow machine.',
        undefined,
        wait.stderrTail,
      );
    }
    await Promise.race([sleep(200), wait.exited]);
  }
}

function earlyExitError(wait: WaitOptions, code: number | null): DevServerStartError {
  const text = wait.stderrTail.join('\n');
  const advice = /address already in use/i.test(text)
    ? `Port ${wait.port} (or the UI port) is taken: stop whatever listens there, pick other ports, ` +
      'or reuse a server that is already running (check it with isServing).'
    : 'Fix the problem the server reports and start it again.';
  return new DevServerStartError(
    `The Temporal dev server (${wait.binary}) exited with ${code === null ? 'a signal' : `code ${code}`} ` +
      `before serving at ${wait.address}. ${describeTail(wait.stderrTail)}${advice}`,
    code,
    wait.stderrTail,
  );
}

function describeTail(tail: readonly string[]): string {
  if (tail.length === 0) return '';
  // The dev server logs many warnings; its errors are what explain a failed start.
  const errors = tail.filter((line) => /level=(ERROR|FATAL)|^Error:/i.test(line));
  const shown = errors.length > 0 ? errors.slice(-5) : tail.slice(-10);
  return `Its last output:\n  ${shown.join('\n  ')}\n`;
}

/** Keeps the last stderr lines (and forwards them when stdio is 'inherit'). */
function keepTail(child: ChildProcess, stdio: DevServerSettings['stdio']): string[] {
  const tail: string[] = [];
  let partial = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stdio === 'inherit') process.stderr.write(chunk);
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim()) tail.push(line.trimEnd());
    tail.splice(0, Math.max(0, tail.length - 30));
  });
  child.stderr?.on('end', () => {
    if (partial.trim()) tail.push(partial.trimEnd());
  });
  return tail;
}

function stopper(child: ChildProcess, exited: Promise<number | null>): () => Promise<void> {
  let stopping: Promise<void> | undefined;
  return () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
        await exited;
        return;
      }
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((done) => {
          timer = setTimeout(() => done(true), 10_000);
        }),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        child.kill('SIGKILL');
        await exited;
      }
    })();
    return stopping;
  };
}

async function startWithSdkDownload(settings: DevServerSettings, cliAttempts: readonly string[]): Promise<DevServerHandle> {
  const attempts = [...cliAttempts];
  let testing: typeof Testing;
  try {
    testing = await import('@temporalio/testing');
  } catch {
    attempts.push('@temporalio/testing download: the @temporalio/testing package is not installed (it is a devDependency)');
    throw new DevServerUnavailableError(attempts);
  }

  let environment: Awaited<ReturnType<typeof testing.TestWorkflowEnvironment.createLocal>>;
  try {
    environment = await testing.TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'cached-download', downloadDir: join(settings.cacheDir, 'sdk-download') },
        dbFilename: settings.dbFile,
        ip: settings.ip,
        port: settings.port,
        namespace: settings.namespace,
        log: { format: 'pretty', level: settings.logLevel },
        extraArgs: registrationArgs(settings),
        ...(settings.uiPort === false ? { ui: false } : { ui: true, uiPort: settings.uiPort }),
      },
    });
  } catch (error) {
    attempts.push(`@temporalio/testing download: ${error instanceof Error ? error.message : String(error)}`);
    throw new DevServerUnavailableError(attempts);
  }

  let markExited: (code: number | null) => void = () => undefined;
  const exited = new Promise<number | null>((done) => (markExited = done));
  let stopping: Promise<void> | undefined;
  return {
    address: environment.address,
    namespace: settings.namespace,
    uiUrl: settings.uiPort === false ? undefined : `http://${hostPort(connectHost(settings.ip), settings.uiPort)}`,
    dbFile: settings.dbFile,
    pid: undefined,
    source: 'sdk-download',
    stdout: null,
    stderr: null,
    exited,
    stop: () => {
      stopping ??= environment.teardown().finally(() => markExited(null));
      return stopping;
    },
  };
}

/** The address a client on this machine dials to reach a server bound to `ip`. */
function connectHost(ip: string): string {
  if (ip === '0.0.0.0') return '127.0.0.1';
  if (ip === '::' || ip === '[::]') return '::1';
  return ip;
}

function hostPort(host: string, port: number): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
}
