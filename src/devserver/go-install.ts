import { setTimeout as sleep } from 'node:timers/promises';
import { execFile } from 'node:child_process';
import { mkdir, open, readFile, rename, rm, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describeFailure, executableName, executableProblem, findOnPath, isProcessAlive, runStreaming } from './executables';

/** What {@link goInstall} builds, where, and how it knows the result is there. */
export interface GoInstallOptions {
  /** What is built, as it reads in a sentence: `the Temporal CLI`. */
  label: string;
  /** The `go install` arguments, all packages of one module at one version: `module/cmd/x@v1.2.3`. */
  packages: readonly string[];
  /**
   * Another `go` command instead of `go install <packages>` (a `go build -o …` inside a module
   * of ours that pins a dependency), run in `cwd`, with `env` extended by `extraEnv`.
   */
  command?: { args: readonly string[]; cwd: string; extraEnv?: (goVersion: string) => NodeJS.ProcessEnv };
  /** The oldest Go toolchain that can build `packages`. */
  minGoVersion: string;
  /** The per-user cache folder: the build runs there and the lock file lives there. */
  cacheDir: string;
  /** Name of the lock file in `cacheDir`; one per thing built, so unrelated builds do not wait on each other. */
  lockName: string;
  /** The folder `go install` writes the binaries into (`GOBIN`); created when missing. */
  gobin: string;
  /** The path the caller gets back once the build is in place. */
  target: string;
  /** Says what is missing from the finished build, or `undefined` when it is complete. Checked again under the lock. */
  problem: () => Promise<string | undefined>;
  /** Moves what `go install` wrote into its final place; resolves to a problem, or `undefined` on success. */
  place?: () => Promise<string | undefined>;
  /** Why a build is needed, for the progress line: `no temporal binary found`. */
  reason: string;
  env: NodeJS.ProcessEnv;
  output: NodeJS.WritableStream;
  /** How long to wait for another process that holds the lock. */
  lockTimeoutMs: number;
}

/** The outcome of {@link goInstall}: the target's path, or one sentence saying why there is none. */
export type GoInstallResult = { path: string; failure?: never } | { path?: never; failure: string };

/**
 * Builds Go packages with `go install` into the per-user cache, holding a lock file so that
 * concurrent callers (other clones, parallel tests) build once and the others wait and reuse it.
 * Never throws for a missing or old Go or a failed build: those come back as `failure`.
 *
 * @throws {Error} the lock stayed taken by a live process for longer than `lockTimeoutMs`.
 */
export async function goInstall(options: GoInstallOptions): Promise<GoInstallResult> {
  const { env, output } = options;
  const go = await findGo(env);
  if (!go) {
    return { failure: `"go" was not found on PATH${env['GOROOT'] ? ' or in $GOROOT/bin' : ''}` };
  }
  const version = await goVersion(go, env);
  if (!version) return { failure: `"${go} version" did not report a Go version` };
  if (compareVersions(version, options.minGoVersion) < 0) {
    return { failure: `${go} is Go ${version}, but building ${options.label} needs Go ${options.minGoVersion} or newer` };
  }

  await mkdir(options.gobin, { recursive: true });
  return withInstallLock(options, async () => {
    // Another process may have finished the build while this one waited for the lock.
    if (!(await options.problem())) return { path: options.target };

    const args = options.command?.args ?? ['install', ...options.packages];
    const extraEnv = options.command?.extraEnv?.(version) ?? {};
    const toolchain = extraEnv['GOTOOLCHAIN'] !== undefined ? ` (toolchain ${extraEnv['GOTOOLCHAIN']}, fetched from the Go proxy once)` : '';
    output.write(
      `agent-sessions: ${options.reason}; building ${options.label} (go ${args.join(' ')}) ` +
        `with ${go} (Go ${version})${toolchain} into ${options.gobin}. ` +
        'The first build takes a few minutes; later runs reuse it.\n',
    );
    const began = Date.now();
    const exit = await runStreaming(go, args, {
      cwd: options.command?.cwd ?? options.cacheDir,
      env: { ...env, GOBIN: options.gobin, ...extraEnv },
      output,
    });
    if (exit.code !== 0) return { failure: describeFailure('the build', exit) };
    const misplaced = options.place ? await options.place() : undefined;
    if (misplaced) return { failure: `the build succeeded but ${misplaced}` };
    const problem = await options.problem();
    if (problem) return { failure: `the build succeeded but ${problem}` };
    output.write(`agent-sessions: ${options.label} built in ${Math.round((Date.now() - began) / 1000)} s, installed at ${options.target}\n`);
    return { path: options.target };
  });
}

/**
 * A {@link GoInstallOptions.place} that moves the folder a build wrote (`scratch`) to `dir`,
 * replacing what was there: the finished build appears whole or not at all.
 */
export function moveBuiltFolder(scratch: string, dir: string): () => Promise<string | undefined> {
  return async () => {
    try {
      await rm(dir, { recursive: true, force: true });
      await rename(scratch, dir);
      return undefined;
    } catch (error) {
      return `moving the binary into ${dir} failed: ${(error as Error).message}`;
    }
  };
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

/** Compares two Go versions (`1.26.8` < `1.26.10`): negative, zero or positive. */
export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map(Number);
  const right = b.split('.').map(Number);
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const diff = (left[i] ?? 0) - (right[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/**
 * Runs `fn` while holding `<cacheDir>/<lockName>`. A lock whose owner is gone (or that is older
 * than two hours) is taken over, so a crashed build never blocks later ones.
 */
export async function withInstallLock<T>(
  options: Pick<GoInstallOptions, 'cacheDir' | 'lockName' | 'label' | 'lockTimeoutMs' | 'output'>,
  fn: () => Promise<T>,
): Promise<T> {
  const lockPath = join(options.cacheDir, options.lockName);
  const deadline = Date.now() + options.lockTimeoutMs;
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
        `Timed out after ${Math.round(options.lockTimeoutMs / 1000)}s waiting for another process${owner.pid ? ` (pid ${owner.pid})` : ''} ` +
          `to finish building ${options.label}. If no build is running, delete ${lockPath} and try again.`,
      );
    }
    if (!announced) {
      options.output.write(
        `agent-sessions: another process${owner.pid ? ` (pid ${owner.pid})` : ''} is building ${options.label}; waiting for it (lock ${lockPath}).\n`,
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
  return { stale: !isProcessAlive(owner.pid), pid: owner.pid };
}
