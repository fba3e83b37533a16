import { rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { executableName, executableProblem } from './executables';
import { goInstall } from './go-install';
import { resolveCacheDir } from './temporal-cli';

/**
 * The Temporal server release every setup runs: the dev server (on SQLite), `cluster` (on
 * PostgreSQL) and the `temporalio/server` image docker-compose.yml pins. At least 1.30.2, which
 * tells a pinned workflow that its deployment's target version changed (releases need it); the
 * newest whose module builds with `go install` (no `replace` in its go.mod).
 */
export const TEMPORAL_SERVER_VERSION = '1.31.0';

/** The Go module that holds the server and its SQL schema tool. */
export const TEMPORAL_SERVER_MODULE = 'go.temporal.io/server';

/** The oldest Go toolchain that can build {@link TEMPORAL_SERVER_VERSION} (its go.mod says `go 1.26.2`). */
export const MIN_GO_VERSION_FOR_SERVER = '1.26.2';

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
        'and run again: the first run builds it once per user (about 3 minutes) and later runs reuse it.',
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

/** The folder of the cached binaries of {@link TEMPORAL_SERVER_VERSION}: `<cacheDir>/bin/temporal-server-1.31.0`. */
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
  const built = await goInstall({
    label: `the Temporal server ${TEMPORAL_SERVER_VERSION}`,
    packages: ['cmd/server', 'cmd/tools/sql'].map((pkg) => `${TEMPORAL_SERVER_MODULE}/${pkg}@v${TEMPORAL_SERVER_VERSION}`),
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
