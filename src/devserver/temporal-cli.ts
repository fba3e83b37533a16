import { join, resolve } from 'node:path';
import { resolveCacheDir } from '../config/paths';
import { executableName, executableProblem, findOnPath, SourcesTriedError } from './executables';
import { goInstall, type GoInstallResult } from './go-install';

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
  /**
   * Environment to read `PATH` (and `GOROOT` for a build) from, and `TEMPORAL_CLI_PATH` and the
   * cache variables when {@link temporalCliPath} and {@link cacheDir} are not given. Defaults to `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder. Defaults to the one `env` names (`AGENT_SESSIONS_CACHE_DIR`, `XDG_CACHE_HOME`, `~/.cache`). */
  cacheDir?: string;
  /** A `temporal` binary chosen explicitly (what `TEMPORAL_CLI_PATH` says). Defaults to `env`'s `TEMPORAL_CLI_PATH`. */
  temporalCliPath?: string;
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

const CLI_ADVICE = `Install Go ${MIN_GO_VERSION} or newer (https://go.dev/dl/) and run again, or set TEMPORAL_CLI_PATH to a temporal binary.`;

/**
 * Thrown by {@link findTemporalCli} when no binary was found and none could be installed.
 * `attempts` lists every place looked at and why each failed; callers may fall back to another
 * source (such as the SDK's download) and should show `attempts` if that fails too.
 */
export class TemporalCliNotFoundError extends SourcesTriedError {
  override readonly name = 'TemporalCliNotFoundError';

  constructor(attempts: readonly string[]) {
    super('No Temporal CLI binary could be found or installed.', attempts, CLI_ADVICE);
  }
}

export { resolveCacheDir } from '../config/paths';

/** Where the per-user cached `temporal` binary lives (it may not exist yet). */
export function cachedTemporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return cachedCliIn(resolveCacheDir(env));
}

function cachedCliIn(cacheDir: string): string {
  return join(cacheDir, 'bin', executableName('temporal'));
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
  const cacheDir = options.cacheDir ?? resolveCacheDir(env);
  const attempts: string[] = [];

  const explicit = options.temporalCliPath ?? env['TEMPORAL_CLI_PATH'];
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

  const cached = cachedCliIn(cacheDir);
  const cacheProblem = await executableProblem(cached);
  if (!cacheProblem) return cached;
  attempts.push(`per-user cache: ${cached}: ${cacheProblem}`);

  if (options.install === false) {
    attempts.push(`go install ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}: not attempted (install: false)`);
    throw new TemporalCliNotFoundError(attempts);
  }

  const built = await installWithGo(env, cacheDir, output, options.lockTimeoutMs ?? 30 * 60_000);
  if (built.path) return built.path;
  attempts.push(`go install ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}: ${built.failure}`);
  throw new TemporalCliNotFoundError(attempts);
}

function installWithGo(env: NodeJS.ProcessEnv, cacheDir: string, output: NodeJS.WritableStream, lockTimeoutMs: number): Promise<GoInstallResult> {
  const target = cachedCliIn(cacheDir);
  return goInstall({
    label: 'the Temporal CLI',
    packages: [`${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION}`],
    minGoVersion: MIN_GO_VERSION,
    cacheDir,
    lockName: 'temporal-install.lock',
    gobin: join(cacheDir, 'bin'),
    target,
    problem: () => executableProblem(target),
    reason: 'no temporal binary found',
    env,
    output,
    lockTimeoutMs,
  });
}
