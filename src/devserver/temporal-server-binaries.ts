import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { executableName, executableProblem } from './executables';
import { compareVersions, goInstall } from './go-install';
import { resolveCacheDir } from './temporal-cli';
import { TEMPORAL_SERVER_VERSION } from './temporal-release';

export { TEMPORAL_SERVER_VERSION } from './temporal-release';

/** The Go module that holds the server and its SQL schema tool. */
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

/** The Go {@link TEMPORAL_SERVER_VERSION} asks for (its go.mod says `go 1.26.8`). */
const SERVER_GO_VERSION = '1.26.8';

/**
 * The toolchain an older local Go builds the server with: the go command fetches it from the Go
 * module proxy once per user (`GOTOOLCHAIN`), so any Go from 1.21 on can build the server.
 */
const SERVER_TOOLCHAIN = 'go1.27.3';

/** The oldest local Go that can build {@link TEMPORAL_SERVER_VERSION} (1.21 understands `GOTOOLCHAIN` and fetches the toolchain it needs). */
export const MIN_GO_VERSION_FOR_SERVER = '1.21';

/** The server binary and the schema tool of one release, as {@link findTemporalServerBinaries} returns them. */
export interface TemporalServerBinaries {
  /** `temporal-server`: all services of a Temporal cluster (`start`). */
  readonly server: string;
  /**
   * `temporal-sql-tool`: creates databases and applies schemas. The schema files of its release are
   * embedded in it (`--schema-name postgresql/v12/temporal`), so nothing else has to be kept beside it.
   */
  readonly sqlTool: string;
  /** The release they were built from. */
  readonly version: string;
}

/**
 * Thrown by {@link findTemporalServerBinaries} when the binaries are not cached and cannot be
 * built; the message says what is missing and how to get it.
 */
export class TemporalServerUnavailableError extends Error {
  override readonly name = 'TemporalServerUnavailableError';

  constructor(problem: string, folder: string) {
    super(
      `The Temporal server ${TEMPORAL_SERVER_VERSION} is not in ${folder} and could not be built: ${problem}. ` +
        `Install Go ${MIN_GO_VERSION_FOR_SERVER} or newer (https://go.dev/dl/, or your distribution's golang package) ` +
        'and run again: the first run builds it once per user (about 6 minutes with empty Go caches) and later runs reuse it.',
    );
  }
}

/** Options for {@link findTemporalServerBinaries}. */
export interface FindTemporalServerOptions {
  /** Environment to read `PATH` from, and the cache variables when {@link cacheDir} is not given. Defaults to `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder. Defaults to the one `env` names (`AGENT_SESSIONS_CACHE_DIR`, `XDG_CACHE_HOME`, `~/.cache`). */
  cacheDir?: string;
  /** Where progress lines and the Go build's output go. Defaults to `process.stderr`. */
  output?: NodeJS.WritableStream;
  /** How long to wait for another process that is already building them. Defaults to 30 minutes. */
  lockTimeoutMs?: number;
}

/** The folder of the cached binaries of {@link TEMPORAL_SERVER_VERSION}: `<cacheDir>/bin/temporal-server-1.32.0`. */
export function cachedTemporalServerDir(env: NodeJS.ProcessEnv = process.env): string {
  return serverDirIn(resolveCacheDir(env));
}

function serverDirIn(cacheDir: string): string {
  return join(cacheDir, 'bin', `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

/**
 * Finds `temporal-server` and `temporal-sql-tool` of {@link TEMPORAL_SERVER_VERSION} in the
 * per-user cache, building both with one `go install` from the Go module proxy when they are
 * missing. The build lands in a scratch folder that is renamed into place only when both
 * binaries are there, under a lock, so concurrent callers build once and never see half a build.
 *
 * @throws {TemporalServerUnavailableError} they are not cached and Go is missing, too old, or the build failed.
 */
export async function findTemporalServerBinaries(options: FindTemporalServerOptions = {}): Promise<TemporalServerBinaries> {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? resolveCacheDir(env);
  const dir = serverDirIn(cacheDir);
  const binaries: TemporalServerBinaries = {
    server: join(dir, executableName('temporal-server')),
    sqlTool: join(dir, executableName('temporal-sql-tool')),
    version: TEMPORAL_SERVER_VERSION,
  };
  const problem = async (): Promise<string | undefined> => {
    for (const path of [binaries.server, binaries.sqlTool]) {
      const missing = await executableProblem(path);
      if (missing) return `${path}: ${missing}`;
    }
    return undefined;
  };
  if (!(await problem())) return binaries;

  const scratch = `${dir}.building`;
  const packages = ['cmd/server', 'cmd/tools/sql'].map((pkg) => `${TEMPORAL_SERVER_MODULE}/${pkg}@v${TEMPORAL_SERVER_VERSION}`);
  const built = await goInstall({
    label: `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
    packages,
    command: {
      args: ['install', ...packages],
      cwd: cacheDir,
      extraEnv: (local) => (compareVersions(local, SERVER_GO_VERSION) >= 0 ? {} : { GOTOOLCHAIN: SERVER_TOOLCHAIN }),
    },
    minGoVersion: MIN_GO_VERSION_FOR_SERVER,
    cacheDir,
    lockName: `temporal-server-${TEMPORAL_SERVER_VERSION}-install.lock`,
    gobin: scratch,
    target: binaries.server,
    problem,
    // `go install` names the binaries after their package folders: `server` and `sql`.
    place: async () => {
      try {
        await rename(join(scratch, executableName('server')), join(scratch, executableName('temporal-server')));
        await rename(join(scratch, executableName('sql')), join(scratch, executableName('temporal-sql-tool')));
        await rm(dir, { recursive: true, force: true });
        await rename(scratch, dir);
        return undefined;
      } catch (error) {
        return `moving the binaries into ${dir} failed: ${(error as Error).message}`;
      }
    },
    reason: `no temporal-server ${TEMPORAL_SERVER_VERSION} in the per-user cache`,
    env,
    output: options.output ?? process.stderr,
    lockTimeoutMs: options.lockTimeoutMs ?? 30 * 60_000,
  });
  if (built.failure !== undefined) throw new TemporalServerUnavailableError(built.failure, dir);
  return binaries;
}
