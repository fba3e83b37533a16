import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { resolveCacheDir } from '../config/paths';
import { findFreePort } from './free-port';
import { describeFailure, executableProblem, runStreaming } from './executables';
import { withInstallLock } from './go-install';
import { ManagedProcess } from './managed-process';

/**
 * The Arize Phoenix release `agent-sessions up --traces` runs (`arize-phoenix` on PyPI): a trace
 * UI made for LLM applications, which reads our `gen_ai.*` spans as model, tool and agent calls.
 */
export const PHOENIX_VERSION = '20.26.1';

/** The uv (PyPI `uv`, Astral's Python package installer) that installs Phoenix's packages. */
const UV_VERSION = '0.13.9';

/** The Phoenix project every span goes to unless `openinference.project.name` says otherwise. */
export const PHOENIX_DEFAULT_PROJECT = 'default';

/** Thrown when Phoenix is not in the per-user cache and cannot be installed; the message says what to do. */
export class PhoenixUnavailableError extends Error {
  override readonly name = 'PhoenixUnavailableError';

  constructor(problem: string, folder: string) {
    super(
      `Arize Phoenix ${PHOENIX_VERSION} (the trace UI of --traces) is not in ${folder} and could not be installed: ${problem}. ` +
        'Install python3 (3.11 to 3.14) with its venv module (Debian: apt-get install -y python3 python3-venv) and run again, ' +
        'or point OTEL_EXPORTER_OTLP_ENDPOINT at a collector of your own instead of --traces.',
    );
  }
}

/** The virtual environment Phoenix lives in: `<cache>/venv-phoenix-<version>`. */
export function phoenixVenv(cacheDir: string): string {
  return join(cacheDir, `venv-phoenix-${PHOENIX_VERSION}`);
}

/** Written into the environment once its install has finished, so that a half-made one is never used. */
const INSTALLED_MARK = 'agent-sessions-installed';

/**
 * Finds Phoenix's Python in the per-user cache, installing `arize-phoenix==<version>` from PyPI
 * into a virtual environment there when it is missing, with uv (itself installed there by pip;
 * pip alone where that fails), once per machine, under a lock, as the Temporal binaries are
 * built: two processes starting at once install it once.
 *
 * @returns the environment's `python`, which {@link startPhoenix} runs Phoenix's server with.
 * @throws {PhoenixUnavailableError} python3 is missing or too old, or its venv module, pip or uv failed.
 */
export async function findPhoenix(options: { env?: NodeJS.ProcessEnv; cacheDir?: string; output?: NodeJS.WritableStream } = {}): Promise<string> {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? resolveCacheDir(env);
  const output = options.output ?? process.stderr;
  const dir = phoenixVenv(cacheDir);
  const python = join(dir, 'bin', 'python');
  const installed = async (): Promise<boolean> =>
    (await executableProblem(python)) === undefined && (await readFile(join(dir, INSTALLED_MARK), 'utf8').catch(() => '')).trim() === PHOENIX_VERSION;
  if (await installed()) return python;
  await mkdir(cacheDir, { recursive: true });
  return withInstallLock({ cacheDir, lockName: `venv-phoenix-${PHOENIX_VERSION}.lock`, label: `Arize Phoenix ${PHOENIX_VERSION}`, lockTimeoutMs: 15 * 60_000, output }, async () => {
    // Another process may have installed it while this one waited for the lock.
    if (await installed()) return python;
    const started = Date.now();
    const step = async (what: string, command: string, args: string[]): Promise<void> => {
      const exit = await runStreaming(command, args, { cwd: cacheDir, env, output });
      if (exit.code !== 0) throw new PhoenixUnavailableError(describeFailure(what, exit), dir);
    };
    const version = await runCapture('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], env);
    if (version === undefined) throw new PhoenixUnavailableError('python3 was not found on PATH', dir);
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major !== 3 || minor < 11 || minor > 14) throw new PhoenixUnavailableError(`python3 on PATH is Python ${version}, and Phoenix ${PHOENIX_VERSION} needs 3.11 to 3.14`, dir);
    output.write(`agent-sessions: installing Arize Phoenix ${PHOENIX_VERSION} (the trace UI) from PyPI into ${dir}, once per machine (about a minute, and Phoenix's first start takes a minute more)\n`);
    // --clear: a folder a crashed install left behind is made again from nothing.
    await step('python3 -m venv', 'python3', ['-m', 'venv', '--clear', dir]);
    // uv installs Phoenix's 150-odd packages in parallel and leaves their byte-code to the first
    // start: measured under load, 40 s where pip alone took 298 s (and byte-compiling at install cost more
    // than it saved at the first start). pip alone where uv cannot install.
    const pip = (spec: string) => ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-input', spec];
    const uv = await runStreaming(python, pip(`uv==${UV_VERSION}`), { cwd: cacheDir, env, output });
    if (uv.code === 0) {
      await step(`uv pip install arize-phoenix==${PHOENIX_VERSION}`, python, ['-m', 'uv', 'pip', 'install', '--quiet', '--python', python, `arize-phoenix==${PHOENIX_VERSION}`]);
    } else {
      output.write(`agent-sessions: ${describeFailure(`pip install uv==${UV_VERSION}`, uv)}; installing with pip alone (about 3 to 5 minutes)\n`);
      await step(`pip install arize-phoenix==${PHOENIX_VERSION}`, python, pip(`arize-phoenix==${PHOENIX_VERSION}`));
    }
    await writeFile(join(dir, INSTALLED_MARK), `${PHOENIX_VERSION}\n`);
    output.write(`agent-sessions: installed Arize Phoenix ${PHOENIX_VERSION} in ${Math.round((Date.now() - started) / 1000)} s\n`);
    return python;
  });
}

/** Options of {@link startPhoenix}. */
export interface PhoenixOptions {
  /** The `python` of Phoenix's environment ({@link findPhoenix}). */
  python: string;
  /** Its working folder: its SQLite database of traces and its log file (`phoenix.log`). */
  dir: string;
  /** Where its own notices go (that it died); its output goes to `<dir>/phoenix.log`. */
  output?: NodeJS.WritableStream;
  /** Whether it keeps this Node process alive (default true); tests say false. */
  keepsProcessAlive?: boolean;
  /** Its environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
}

/** A running Phoenix on loopback. */
export interface RunningPhoenix {
  /** Its web UI, REST API (`/v1/…`) and GraphQL API (`/graphql`): `http://127.0.0.1:<port>`. */
  readonly uiUrl: string;
  /**
   * Its OTLP/HTTP receiver as `OTEL_EXPORTER_OTLP_ENDPOINT` names it (the exporter appends
   * `/v1/traces`): the UI's own address. It takes protobuf, not JSON.
   */
  readonly otlpHttpUrl: string;
  /** Where one trace opens, `{traceId}` for its id (`AGENT_SESSIONS_TRACE_URL`): Phoenix finds the trace's project itself. */
  readonly traceUrl: string;
  readonly logFile: string;
  readonly pid: number | undefined;
  /** Stops it; resolves once it has exited. */
  stop(): Promise<void>;
}

/**
 * Runs Phoenix's server with its OTLP/gRPC receiver left out. Phoenix binds that receiver to
 * every interface, whatever `PHOENIX_HOST` says (`[::]:<port>` in `phoenix/server/grpc_server.py`),
 * and the exporters here speak OTLP/HTTP to the UI's port, which does follow `PHOENIX_HOST`:
 * without the receiver, nothing of it listens beyond loopback.
 */
const SERVE = [
  'import sys',
  'from phoenix.server import grpc_server',
  'async def _no_grpc(self): return None',
  'grpc_server.GrpcServer.__aenter__ = _no_grpc',
  'from phoenix.server.main import main',
  "sys.argv = ['phoenix', 'serve']",
  'main()',
].join('\n');

/**
 * Starts Phoenix on loopback on a free port, its traces in a SQLite file in `dir`. Its telemetry
 * and its built-in assistant (an LLM agent with server-side bash, web and GitHub tools) are off:
 * it is here to show traces. Resolves once it answers.
 *
 * @throws Error when it exits or does not answer within five minutes (the message has its last lines).
 */
export async function startPhoenix(options: PhoenixOptions): Promise<RunningPhoenix> {
  await mkdir(options.dir, { recursive: true });
  const port = await findFreePort();
  const logFile = join(options.dir, 'phoenix.log');
  const log = createWriteStream(logFile, { flags: 'a' });
  const phoenix = new ManagedProcess({
    name: 'phoenix',
    command: options.python,
    args: ['-c', SERVE],
    env: {
      ...(options.env ?? process.env),
      PHOENIX_HOST: '127.0.0.1',
      PHOENIX_PORT: String(port),
      PHOENIX_WORKING_DIR: options.dir,
      PHOENIX_TELEMETRY_ENABLED: 'false',
      PHOENIX_DISABLE_AGENT_ASSISTANT: 'true',
      PHOENIX_AGENTS_DISABLE_BASH: 'true',
      PHOENIX_AGENTS_DISABLE_WEB_ACCESS: 'true',
      PHOENIX_AGENTS_DISABLE_GITHUB: 'true',
      PYTHONUNBUFFERED: '1',
    },
    output: log,
    notices: options.output ?? process.stderr,
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
    killSignal: 'SIGKILL',
    restart: 'no',
    keepsProcessAlive: options.keepsProcessAlive ?? true,
  });
  phoenix.start();
  const uiUrl = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await phoenix.stop();
    log.end();
  };
  try {
    // A first start byte-compiles Phoenix's modules: 98 s measured on a loaded 2-core machine.
    await untilAnswering(`${uiUrl}/healthz`, phoenix, 300_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { uiUrl, otlpHttpUrl: uiUrl, traceUrl: `${uiUrl}/redirects/traces/{traceId}`, logFile, pid: phoenix.pid, stop };
}

/** A span as Phoenix's REST API (`GET /v1/projects/{project}/spans`) answers it. */
export interface PhoenixSpan {
  name: string;
  context: { trace_id: string; span_id: string };
  parent_id: string | null;
  span_kind: string;
  status_code: string;
  status_message: string;
  attributes: Record<string, unknown>;
}

/**
 * The spans Phoenix holds in one project, filtered by trace ids or span names; every page is
 * read unless `atMost` says when to stop.
 *
 * @throws Error when Phoenix answers with an error (an unknown project is a 404).
 */
export async function phoenixSpans(uiUrl: string, project: string, filter: { traceIds?: readonly string[]; names?: readonly string[]; atMost?: number } = {}): Promise<PhoenixSpan[]> {
  const spans: PhoenixSpan[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ limit: String(Math.min(1000, filter.atMost ?? 1000)) });
    for (const id of filter.traceIds ?? []) query.append('trace_id', id);
    for (const name of filter.names ?? []) query.append('name', name);
    if (cursor !== undefined) query.set('cursor', cursor);
    const response = await fetch(`${uiUrl}/v1/projects/${encodeURIComponent(project)}/spans?${query}`);
    if (!response.ok) throw new Error(`Phoenix answered ${response.status} to GET /v1/projects/${project}/spans: ${(await response.text()).slice(0, 300)}`);
    const page = (await response.json()) as { data: PhoenixSpan[]; next_cursor: string | null };
    spans.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && spans.length < (filter.atMost ?? Infinity));
  return spans;
}

/** The trimmed stdout of a command that succeeded, or `undefined`. */
function runCapture(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((done) => execFile(command, args, { env, timeout: 30_000 }, (error, stdout) => done(error ? undefined : stdout.trim())));
}

async function untilAnswering(url: string, process: ManagedProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!process.isRunning()) throw new Error(`Phoenix exited before it answered at ${url}. ${process.describeTail()}`);
    const ok = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Phoenix did not answer at ${url} within ${timeoutMs / 1000} s. ${process.describeTail()}`);
    await sleep(250);
  }
}
