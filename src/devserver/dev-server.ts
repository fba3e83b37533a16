import { setTimeout as sleep } from 'node:timers/promises';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as connectHttp2 } from 'node:http2';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Writable, type Readable } from 'node:stream';
import { Connection } from '@temporalio/client';
import { defaultDataDir, resolveCacheDir } from '../config/paths';
import { SESSION_SEARCH_ATTRIBUTES } from '../session/search-attributes';
import { SourcesTriedError } from './executables';
import { findFreePort } from './free-port';
import { ManagedProcess } from './managed-process';
import { registerNamespace } from './temporal-namespace';
import { findTemporalServerBinaries, MIN_GO_VERSION_FOR_SERVER, TEMPORAL_SERVER_VERSION, TemporalServerUnavailableError } from './temporal-server-binaries';
import { temporalConfigDir, temporalServerArgs } from './temporal-server-config';
import { findTemporalUiBinary, TemporalUiUnavailableError } from './temporal-ui-binary';

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
  /** Dynamic config values over {@link DEV_DYNAMIC_CONFIG}, written to `<dbFile>.dynamic-config.yaml`. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Search attributes to register besides the sessions' own (always declared). */
  searchAttributes?: Record<string, SearchAttributeTypeName>;
  /**
   * The server's own output always goes to its log file (`<dbFile>.log`, the handle's `logFile`),
   * and its last lines explain a failed start. `'inherit'` (the default) prints the progress of a
   * first-time build of the binaries on stderr; `'ignore'` and `'pipe'` print nothing.
   */
  stdio?: 'inherit' | 'ignore' | 'pipe';
  /** How long to wait for the frontend to serve the namespace. Defaults to 60 seconds. */
  startTimeoutMs?: number;
  /** Environment of the server process and the binary lookup (`PATH`), and of the paths not given here. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder (the cached binary, the SDK's download). Defaults to the one `env` names. */
  cacheDir?: string;
  /** Ignored since the dev server is `temporal-server` itself (set `TEMPORAL_SERVER_PATH` in `env` for another binary). Kept so existing callers compile. */
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
  /** What runs: `temporal-server` (TEMPORAL_SERVER_VERSION) from the per-user cache, or `TEMPORAL_SERVER_PATH`. */
  readonly source: 'temporal-server';
  /** Always `null`: the server's output goes to {@link logFile}. Kept for callers of the CLI-based dev server. */
  readonly stdout: Readable | null;
  /** Always `null` (see {@link stdout}). */
  readonly stderr: Readable | null;
  /** Settles when the server exits: its exit code, or `null` when a signal ended it. Never rejects. */
  readonly exited: Promise<number | null>;
  /**
   * Stops the Web UI, then the server: SIGTERM, then SIGKILL if one has not exited after 10
   * seconds. Safe to call twice. `onStopped` is told of each component once it has exited, in
   * words for a person (`the Temporal server (its log: …)`), by the first call only.
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

const SERVER_ADVICE =
  `Install Go ${MIN_GO_VERSION_FOR_SERVER} or newer (https://go.dev/dl/) so the Temporal server can be built, ` +
  'set TEMPORAL_SERVER_PATH to a temporal-server binary, or set TEMPORAL_ADDRESS to use a server that is already running.';

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
 * Starts the Temporal server (`temporal-server`, TEMPORAL_SERVER_VERSION, the same binary
 * `agent-sessions cluster` runs) on a SQLite file with `deploy/temporal/development.yaml`, creates
 * the namespace and declares the search attributes over gRPC, and serves the Web UI
 * (`ui-server`, TEMPORAL_UI_VERSION) unless `uiPort` is `false`. Resolves once the frontend serves
 * the namespace (and the UI answers). The binaries come from the per-user cache, built there from
 * the Go module proxy the first time (both at once when both are needed). The server's log goes to
 * `<dbFile>.log`; the handle names it.
 *
 * @throws {DevServerStartError} a port is taken, the SQLite file was written by an older server,
 *   the server exited before serving, or it did not serve in time.
 * @throws {DevServerUnavailableError} a binary is not cached and could not be built.
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
  const explicit = settings.env['TEMPORAL_SERVER_PATH'];
  const [server, ui] = await Promise.all([
    explicit !== undefined && explicit !== ''
      ? Promise.resolve(explicit)
      : findTemporalServerBinaries({ env: settings.env, cacheDir: settings.cacheDir, output }).then((found) => found.server, unavailable),
    settings.uiPort === false ? Promise.resolve(undefined) : findTemporalUiBinary({ env: settings.env, cacheDir: settings.cacheDir, output }).catch(unavailable),
  ]);

  const logFile = `${settings.dbFile}.log`;
  const log = createWriteStream(logFile, { flags: 'a' });
  const dynamicConfigFile = `${settings.dbFile}.dynamic-config.yaml`;
  writeFileSync(dynamicConfigFile, dynamicConfigYaml({ ...DEV_DYNAMIC_CONFIG, ...settings.dynamicConfig }));
  const temporal = new ManagedProcess({
    name: 'temporal',
    command: server,
    args: temporalServerArgs(temporalConfigDir(), DEV_CONFIG_ENVIRONMENT),
    env: await devServerEnv(settings, dynamicConfigFile),
    output: log,
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
    killSignal: 'SIGKILL',
    restart: 'no',
    keepsProcessAlive: settings.keepsProcessAlive,
  });
  const processes: ManagedProcess[] = [temporal];
  const components: Record<string, string> = { temporal: `the Temporal server (its log: ${logFile})`, 'temporal-ui': 'the Temporal Web UI' };
  const stopAll = async (onStopped?: (component: string) => void): Promise<void> => {
    for (const part of [...processes].reverse()) {
      await part.stop();
      onStopped?.(components[part.name] ?? part.name);
    }
    await new Promise<void>((done) => log.end(done));
  };
  const stopOnParentExit = (): void => {
    for (const part of processes) if (part.pid !== undefined) process.kill(part.pid, 'SIGKILL');
  };
  process.once('exit', stopOnParentExit);
  try {
    temporal.start();
    await untilServing(temporal, address, 'temporal-system', settings.startTimeoutMs, server, logFile, settings.port);
    await registerNamespace({ address, namespace: settings.namespace, searchAttributes: settings.searchAttributes });
    await untilServing(temporal, address, settings.namespace, settings.startTimeoutMs, server, logFile, settings.port);
    if (ui !== undefined && settings.uiPort !== false) {
      const uiProcess = new ManagedProcess({
        name: 'temporal-ui',
        command: ui,
        args: ['--root', writeUiConfig(settings, address), '--config', '.', '--env', 'development', 'start'],
        env: { PATH: settings.env['PATH'] ?? '' },
        output: log,
        stopSignal: 'SIGTERM',
        stopTimeoutMs: 10_000,
        killSignal: 'SIGKILL',
        restart: 'no',
        keepsProcessAlive: settings.keepsProcessAlive,
      });
      processes.push(uiProcess);
      uiProcess.start();
      await untilUiAnswers(uiProcess, `http://${hostPort(connectHost(settings.ip), settings.uiPort)}`, settings.startTimeoutMs);
    }
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
    uiUrl: settings.uiPort === false ? undefined : `http://${hostPort(connectHost(settings.ip), settings.uiPort)}`,
    dbFile: settings.dbFile,
    logFile,
    pid: temporal.pid,
    source: 'temporal-server',
    stdout: null,
    stderr: null,
    exited,
    stop: (onStopped) =>
      (stopping ??= stopAll(onStopped).finally(() => {
        process.removeListener('exit', stopOnParentExit);
      })),
  };
}

function unavailable(error: unknown): never {
  if (error instanceof TemporalServerUnavailableError || error instanceof TemporalUiUnavailableError) throw new DevServerUnavailableError([error.message]);
  throw error;
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

/** The environment name of the dev server's configuration: `deploy/temporal/development.yaml`. */
export const DEV_CONFIG_ENVIRONMENT = 'development';

/**
 * What the dev server's dynamic config holds unless the caller sets a key: the defaults the
 * Temporal CLI's `start-dev` used (search attributes visible at once, the persistence and
 * visibility rates that allows, a larger workflow cache), and version drainage checked every few
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

/** A dynamic config file with these values, each unconstrained: `key:\n  - value: <JSON>`. */
export function dynamicConfigYaml(values: Readonly<Record<string, string | number | boolean>>): string {
  const lines = ['# Written by agent-sessions at each start of the dev server; edit dynamicConfig instead.'];
  for (const [key, value] of Object.entries(values)) {
    if (!/^[A-Za-z0-9_.]+$/.test(key)) throw new RangeError(`dynamic config key ${JSON.stringify(key)} is not a Temporal dynamic config key (letters, digits, "_" and ".")`);
    lines.push(`${key}:`, `  - value: ${JSON.stringify(value)}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The whole environment of the dev server's process: exactly what development.yaml reads. The
 * ports besides the frontend's are free ones the system picks on the first start of a SQLite
 * file and kept beside it (`<dbFile>.ports.json`): a server restarted on the file (after a crash
 * above all) takes the same ports again, so the membership records it left in the file name it
 * and its history shards come back at once instead of after the old host times out.
 */
export async function devServerEnv(settings: DevServerSettings, dynamicConfigFile: string): Promise<NodeJS.ProcessEnv> {
  const host = settings.ip === '0.0.0.0' || settings.ip === '::' ? '127.0.0.1' : settings.ip;
  const names = ['FRONTEND_HTTP_PORT', 'FRONTEND_MEMBERSHIP_PORT', 'HISTORY_GRPC_PORT', 'HISTORY_MEMBERSHIP_PORT', 'MATCHING_GRPC_PORT', 'MATCHING_MEMBERSHIP_PORT', 'WORKER_GRPC_PORT', 'WORKER_MEMBERSHIP_PORT'];
  const portsFile = `${settings.dbFile}.ports.json`;
  const kept = readKeptPorts(portsFile, settings.port);
  const ports: Record<string, number> = {};
  const taken = new Set<number>([settings.port, ...(settings.uiPort === false ? [] : [settings.uiPort])]);
  for (const name of names) {
    const before = kept[name];
    let port: number;
    if (before !== undefined && !taken.has(before) && (await bindProblem(settings.ip, before)) === undefined) port = before;
    else {
      do port = await findFreePort(host);
      while (taken.has(port));
    }
    taken.add(port);
    ports[name] = port;
  }
  writeFileSync(portsFile, `${JSON.stringify({ FRONTEND_GRPC_PORT: settings.port, ...ports }, null, 2)}\n`);
  return {
    PATH: settings.env['PATH'] ?? '',
    SQLITE_FILE: settings.dbFile,
    BIND_ON_IP: settings.ip,
    FRONTEND_GRPC_PORT: String(settings.port),
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    DYNAMIC_CONFIG_FILE_PATH: dynamicConfigFile,
    LOG_LEVEL: settings.logLevel === 'never' ? 'fatal' : settings.logLevel,
  };
}

/** The ports kept from the last start on this file, when it served the same frontend port; else none. */
function readKeptPorts(file: string, frontendPort: number): Record<string, number> {
  try {
    const kept = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    if (kept['FRONTEND_GRPC_PORT'] !== frontendPort) return {};
    return Object.fromEntries(Object.entries(kept).filter((entry): entry is [string, number] => Number.isInteger(entry[1])));
  } catch {
    return {};
  }
}

/** Writes the Web UI's configuration into `<dbFile>.ui/development.yaml` and returns that folder. */
function writeUiConfig(settings: DevServerSettings, address: string): string {
  const dir = `${settings.dbFile}.ui`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'development.yaml'),
    [
      `temporalGrpcAddress: ${JSON.stringify(address)}`,
      `host: ${JSON.stringify(settings.ip)}`,
      `port: ${settings.uiPort === false ? 0 : settings.uiPort}`,
      'enableUi: true',
      `defaultNamespace: ${JSON.stringify(settings.namespace)}`,
      'cors:',
      '  cookieInsecure: true',
      'disableNewsFetch: true',
      'notifyOnNewVersion: false',
      '',
    ].join('\n'),
  );
  return dir;
}

/**
 * The SQLite file, if it exists, must have been written by this server release: the server
 * creates its tables only when there are none, so a file of an older release (the Temporal CLI
 * 1.5.1's dev server, 1.29.1) would run with an old schema and fail on its first visibility query.
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
    `Cannot start the Temporal dev server: ${dbFile} was written by an older Temporal server (the Temporal CLI's dev server, 1.29), ` +
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
async function untilUiAnswers(ui: ManagedProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!ui.isRunning()) throw new DevServerStartError(`The Temporal Web UI exited before answering at ${url}. ${describeTail(ui.tail)}`, (await ui.exited())?.code ?? null, ui.tail);
    const ok = await fetch(url, { signal: AbortSignal.timeout(1_000) }).then((response) => response.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new DevServerStartError(`The Temporal Web UI did not answer at ${url} within ${Math.round(timeoutMs / 1000)}s. ${describeTail(ui.tail)}`, undefined, ui.tail);
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
