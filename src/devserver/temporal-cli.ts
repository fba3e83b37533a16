import { setTimeout as sleep } from 'node:timers/promises';
import { spawn, execFile } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { homedir, hostname } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * The Temporal CLI release that is installed when no binary is found.
 *
 * v1.5.1 is the newest release whose module `go install …@version` can build (DESIGN §8);
 * bump it only after checking that a newer one still installs that way.
 */
export const TEMPORAL_CLI_VERSION = '1.5.1';

/** The Go package path built by `go install` to provide the `temporal` binary. */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

/** The oldest Go toolchain that can build {@link TEMPORAL_CLI_VERSION}. */
export const MIN_GO_VERSION = '1.25';

/** Options for {@link findTemporalCli}. */
export interface FindTemporalCliOptions {
  /** Environment to read `TEMPORAL_CLI_PATH`, `PATH` and the cache variables from. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Build the CLI with `go install` when no binary is found. Defaults to `true`. */
  install?: boolean;
  /** Where progress lines and the Go build's output are written. Defaults to `process.stderr`. */
  output?: NodeJS.WritableStream;
  /** How long to wait for another process that is already building the CLI. Defaults to 30 minutes. */
  lockTimeoutMs?: number;
}

/**
 * Thrown by {@link findTemporalCli} when `TEMPORAL_CLI_PATH` is set but does not name an
 * executable file. Never falls back to another source: the variable is an explicit choice.
 */
export class TemporalCliPathError extends Error {
  override readonly name = 'TemporalCliPathError';
  /** The value of `TEMPORAL_CLI_PATH` that was rejected. */
  readonly path: string;

  constructor(path: string, problem: string) {
    super(
      `TEMPORAL_CLI_PATH is set to "${path}", but ${problem}. ` +
        'Point TEMPORAL_CLI_PATH at an executable temporal binary, or unset it to let agent-sessions find or install one.',
    );
    this.path = path;
  }
}

/**
 * Thrown by {@link findTemporalCli} when no binary was found and none could be installed.
 * `attempts` lists every place looked at and why each failed; callers may fall back to another
 * source (such as the SDK's download) and should show `attempts` if that fails too.
 */
export class TemporalCliNotFoundError extends Error {
  override readonly name = 'TemporalCliNotFoundError';
  /** One line per source tried, in order, each saying why it gave no binary. */
  readonly attempts: readonly string[];

  constructor(attempts: readonly string[]) {
    super(
      'No Temporal CLI binary could be found or installed. Tried:\n' +
        attempts.map((attempt) => `  - ${attempt}`).join('\n') +
        `\nInstall Go ${MIN_GO_VERSION} or newer (https://go.dev/dl/) and run again, ` +
        'or set TEMPORAL_CLI_PATH to a temporal binary.',
    );
    this.attempts = attempts;
  }
}

/**
 * The per-user cache folder shared by every clone on the machine: `AGENT_SESSIONS_CACHE_DIR`,
 * else `$XDG_CACHE_HOME/agent-sessions`, else `~/.cache/agent-sessions`.
 */
export function resolveCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['AGENT_SESSIONS_CACHE_DIR'];
  if (explicit) return resolve(explicit);
  const xdg = env['XDG_CACHE_HOME'];
  // The XDG spec says relative values are invalid and must be ignored.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'agent-sessions');
  return join(homedir(), '.cache', 'agent-sessions');
}

/** Where the per-user cached `temporal` binary lives (it may not exist yet). */
export function cachedTemporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveCacheDir(env), 'bin', executableName('temporal'));
}

/**
 * Finds a `temporal` binary and resolves to its absolute path. Looks, in order, at
 * `TEMPORAL_CLI_PATH`, `temporal` on `PATH`, and the per-user cache
 * (`<cacheDir>/bin/temporal`); failing all three it builds the pinned release with
 * `go install` into the cache, holding a lock file so that concurrent callers build once.
 *
 * @throws {TemporalCliPathError} `TEMPORAL_CLI_PATH` is set but is not an executable file.
 * @throws {TemporalCliNotFoundError} nothing was found and the build was impossible or failed.
 *
 * @example
 * const temporal = await findTemporalCli();
 * spawn(temporal, ['server', 'start-dev']);
 */
export async function findTemporalCli(options: FindTemporalCliOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const output = options.output ?? process.stderr;
  const attempts: string[] = [];

  const explicit = env['TEMPORAL_CLI_PATH'];
  if (explicit) {
    const path = resolve(explicit);
    const problem = await executableProblem(path);
    if (problem) throw new TemporalCliPathError(explicit, problem);
    return path;
  }
  attempts.push('TEMPORAL_CLI_PATH: not set');

  const onPath = await findOnPath('temporal', env);
  if (onPath) return onPath;
  attempts.push(`PATH: no executable "temporal" in ${env['PATH'] ? `"${env['PATH']}"` : 'an empty PATH'}`);

  const cached = cachedTemporalCliPath(env);
  const cacheProblem = await executableProblem(cached);
  if (!cacheProblem) return cached;
  attempts.push(`per-user cache: ${cached}: ${cacheProblem}`);

  if (options.install === false) {
    attempts.push(`go install ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}: not attempted (install: false)`);
    throw new TemporalCliNotFoundError(attempts);
  }

  const built = await installWithGo(env, output, options.lockTimeoutMs ?? 30 * 60_000);
  if (built.path) return built.path;
  attempts.push(`go install ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}: ${built.failure}`);
  throw new TemporalCliNotFoundError(attempts);
}

type InstallResult = { path: string; failure?: never } | { path?: never; failure: string };

async function installWithGo(
  env: NodeJS.ProcessEnv,
  output: NodeJS.WritableStream,
  lockTimeoutMs: number,
): Promise<InstallResult> {
  const go = await findGo(env);
  if (!go) {
    return { failure: `"go" was not found on PATH${env['GOROOT'] ? ' or in $GOROOT/bin' : ''}` };
  }
  const version = await goVersion(go, env);
  if (!version) return { failure: `"${go} version" did not report a Go version` };
  if (compareVersions(version, MIN_GO_VERSION) < 0) {
    return { failure: `${go} is Go ${version}, but building the Temporal CLI needs Go ${MIN_GO_VERSION} or newer` };
  }

  const cacheDir = resolveCacheDir(env);
  const binDir = join(cacheDir, 'bin');
  const target = join(binDir, executableName('temporal'));
  await mkdir(binDir, { recursive: true });

  return withInstallLock(cacheDir, lockTimeoutMs, output, async () => {
    // Another process may have finished the build while this one waited for the lock.
    if (!(await executableProblem(target))) return { path: target };

    output.write(
      `agent-sessions: no temporal binary found; building Temporal CLI v${TEMPORAL_CLI_VERSION} with ` +
        `${go} (Go ${version}) into ${binDir}. The first build takes several minutes; later runs reuse it.\n`,
    );
    const exit = await runStreaming(go, ['install', `${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`], {
      cwd: cacheDir,
      env: { ...env, GOBIN: binDir },
      output,
    });
    if (exit.code !== 0) {
      const tail = exit.tail.length > 0 ? `; last output:\n      ${exit.tail.join('\n      ')}` : '';
      return { failure: `the build failed (exit ${exit.code ?? exit.signal})${tail}` };
    }
    const problem = await executableProblem(target);
    if (problem) return { failure: `the build succeeded but ${target} ${problem}` };
    output.write(`agent-sessions: Temporal CLI installed at ${target}\n`);
    return { path: target };
  });
}

async function findGo(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const onPath = await findOnPath('go', env);
  if (onPath) return onPath;
  const goroot = env['GOROOT'];
  // GOROOT names an installed toolchain even when its bin folder is missing from PATH.
  const candidate = goroot ? join(goroot, 'bin', executableName('go')) : undefined;
  return candidate && !(await executableProblem(candidate)) ? candidate : undefined;
}

function goVersion(go: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  return new Promise((done) => {
    execFile(go, ['version'], { env, timeout: 30_000 }, (error, stdout) => {
      if (error) return done(undefined);
      done(/go(\d+\.\d+(?:\.\d+)?)/.exec(stdout)?.[1]);
    });
  });
}

/** Compares dotted numeric versions: negative when a < b, 0 when equal, positive when a > b. */
function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

interface StreamedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  tail: string[];
}

function runStreaming(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; output: NodeJS.WritableStream },
): Promise<StreamedExit> {
  return new Promise((done) => {
    const tail: string[] = [];
    const keep = (chunk: Buffer): void => {
      options.output.write(chunk);
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line.trim()) tail.push(line.trimEnd());
      }
      tail.splice(0, Math.max(0, tail.length - 10));
    };
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (error) => done({ code: null, signal: null, tail: [...tail, error.message] }));
    child.once('close', (code, signal) => done({ code, signal, tail }));
  });
}

/**
 * Runs `fn` while holding `<cacheDir>/temporal-install.lock`. A lock whose owner is gone (or
 * that is older than two hours) is taken over, so a crashed build never blocks later ones.
 */
async function withInstallLock<T>(
  cacheDir: string,
  timeoutMs: number,
  output: NodeJS.WritableStream,
  fn: () => Promise<T>,
): Promise<T> {
  const lockPath = join(cacheDir, 'temporal-install.lock');
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    try {
      const handle = await open(lockPath, 'wx');
      try {
        await handle.writeFile(JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }));
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = await lockOwner(lockPath);
    if (owner.stale) {
      await unlink(lockPath).catch(() => undefined);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out after ${Math.round(timeoutMs / 1000)}s waiting for another process${owner.pid ? ` (pid ${owner.pid})` : ''} ` +
          `to finish building the Temporal CLI. If no build is running, delete ${lockPath} and try again.`,
      );
    }
    if (!announced) {
      output.write(
        `agent-sessions: another process${owner.pid ? ` (pid ${owner.pid})` : ''} is building the Temporal CLI; waiting for it (lock ${lockPath}).\n`,
      );
      announced = true;
    }
    await sleep(1_000);
  }
  try {
    return await fn();
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
}

async function lockOwner(lockPath: string): Promise<{ stale: boolean; pid?: number }> {
  let text: string;
  let ageMs: number;
  try {
    [text, ageMs] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath).then((s) => Date.now() - s.mtimeMs)]);
  } catch {
    // The owner released it between our open and our read: try again at once.
    return { stale: false };
  }
  if (ageMs > 2 * 60 * 60_000) return { stale: true };
  let owner: { pid?: unknown; host?: unknown };
  try {
    owner = JSON.parse(text) as typeof owner;
  } catch {
    // Half-written by an owner that is still writing it; judge it by age alone.
    return { stale: ageMs > 60_000 };
  }
  if (typeof owner.pid !== 'number') return { stale: ageMs > 60_000 };
  // A pid is only meaningful on the host that wrote it (the cache may sit on a shared home).
  if (owner.host !== hostname()) return { stale: false, pid: owner.pid };
  return { stale: !isAlive(owner.pid), pid: owner.pid };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function findOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const dirs = (env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const dir of dirs) {
    const candidate = resolve(dir, executableName(name));
    if (!(await executableProblem(candidate))) return candidate;
  }
  return undefined;
}

/** Says why `path` cannot be run, or `undefined` when it is an executable file. */
async function executableProblem(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    if (!info.isFile()) return 'that is not a file';
  } catch {
    return 'no file exists there';
  }
  try {
    await access(path, fsConstants.X_OK);
  } catch {
    return 'the file is not executable (chmod +x it)';
  }
  return undefined;
}

function executableName(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}
