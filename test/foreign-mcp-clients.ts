import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveCacheDir } from '../src/config';

/**
 * The MCP clients that no one here wrote, which test/integration/mcp-foreign-client.test.ts
 * drives against a session: each installed once per user into the per-user cache
 * (`~/.cache/agent-sessions/`, see `resolveCacheDir`) from its own package registry, and found
 * there afterwards. `.ci/run` installs them before the tests (`scripts/ensure-foreign-mcp-clients.ts`);
 * the test installs them itself when run alone on a fresh machine.
 */

/** OpenCode, an agent CLI: the npm package carries its native binary in per-platform packages. */
export const OPENCODE_PACKAGE = { name: 'opencode-ai', version: '1.18.33' } as const;

/** The official Python MCP SDK, from PyPI. */
export const PYTHON_MCP_PACKAGE = { name: 'mcp', version: '2.3.0' } as const;

/** The oldest Python the SDK installs on (its `Requires-Python`). */
const PYTHON_MIN: readonly [number, number] = [3, 10];

/** How long one process waits for another's install of the same client before giving up. */
const LOCK_WAIT_MS = 15 * 60_000;

/** Where the clients go and where the install says what it does. */
export interface ForeignClientOptions {
  /** The per-user cache; `resolveCacheDir(process.env)` unless given. */
  cacheDir?: string;
  /** Where a line is written when something is installed (stderr unless given). */
  output?: NodeJS.WritableStream;
}

/**
 * The OpenCode binary, installed from the npm registry into `<cache>/opencode` the first time:
 * `npm install --ignore-scripts opencode-ai@VERSION`, then the first of the platform packages npm
 * brought (`opencode-linux-x64`, its `-baseline` build for CPUs without AVX2, …) whose binary runs
 * and says its version. The package's own postinstall makes the same choice; it is not run so that
 * the install does not depend on npm's policy for install scripts.
 *
 * @throws Error in one sentence naming what to install when npm is missing or no binary runs here.
 */
export async function ensureOpencode(options: ForeignClientOptions = {}): Promise<string> {
  const spec = `${OPENCODE_PACKAGE.name}@${OPENCODE_PACKAGE.version}`;
  const dir = join(cacheDirOf(options), 'opencode');
  return installOnce(dir, spec, options, async () => {
    await run('npm', ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', spec], {
      cwd: dir,
      missing: 'OpenCode is installed with npm, which is not on PATH: install Node.js with npm (or put its bin folder on PATH)',
      failed: `npm could not install ${spec} into ${dir}`,
    });
    return opencodeBinaryIn(dir);
  });
}

/** The binary of the first platform package under `dir` that runs here. */
async function opencodeBinaryIn(dir: string): Promise<string> {
  const base = `opencode-${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  const installed = new Set(await readdir(join(dir, 'node_modules')).catch(() => []));
  // The postinstall's order for a glibc machine with AVX2; a build that cannot run here fails `--version`.
  const candidates = [base, `${base}-baseline`, `${base}-musl`, `${base}-baseline-musl`].filter((name) => installed.has(name));
  const tried: string[] = [];
  for (const name of candidates) {
    const binary = join(dir, 'node_modules', name, 'bin', process.platform === 'win32' ? 'opencode.exe' : 'opencode');
    const version = await run(binary, ['--version'], { cwd: dir, missing: 'no binary', failed: `${name} does not run here` }).catch((error: Error) => error);
    if (typeof version === 'string' && version.trim() === OPENCODE_PACKAGE.version) return binary;
    tried.push(`${name} (${typeof version === 'string' ? `says ${version.trim()}` : version.message})`);
  }
  throw new Error(
    `no OpenCode ${OPENCODE_PACKAGE.version} binary for ${process.platform}-${process.arch} runs here (tried ${tried.join(', ') || `none: npm brought no ${base}* package`}): ` +
      `install ${OPENCODE_PACKAGE.name}@${OPENCODE_PACKAGE.version} for this platform by hand into ${dir}`,
  );
}

/**
 * The Python of a virtual environment holding the official MCP SDK, made the first time in
 * `<cache>/venv-mcp-python` with the machine's `python3 -m venv` (installing Debian's
 * `python3-venv` with apt-get when the module is missing and apt-get is there) and
 * `pip install mcp==VERSION` from PyPI.
 *
 * @throws Error in one sentence naming what to install when there is no python3 of at least 3.10,
 * no venv module, or pip fails.
 */
export async function ensurePythonMcp(options: ForeignClientOptions = {}): Promise<string> {
  const spec = `${PYTHON_MCP_PACKAGE.name}==${PYTHON_MCP_PACKAGE.version}`;
  const dir = join(cacheDirOf(options), 'venv-mcp-python');
  const python = join(dir, 'bin', 'python');
  return installOnce(dir, spec, options, async () => {
    const version = await run('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
      cwd: dir,
      missing: `the Python MCP client needs Python ${PYTHON_MIN.join('.')} or newer as python3 on PATH: install it (Debian: apt-get install python3 python3-venv)`,
      failed: 'python3 does not run',
    });
    const [major = 0, minor = 0] = version.trim().split('.').map(Number);
    if (major < PYTHON_MIN[0] || (major === PYTHON_MIN[0] && minor < PYTHON_MIN[1])) {
      throw new Error(`the Python MCP client needs Python ${PYTHON_MIN.join('.')} or newer, and python3 on PATH is ${version.trim()}: install a newer python3`);
    }
    await makeVenv(dir);
    await run(python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--quiet', spec], {
      cwd: dir,
      missing: `the virtual environment ${dir} has no python`,
      failed: `pip could not install ${spec} from PyPI into ${dir}`,
    });
    return python;
  });
}

/** `python3 -m venv dir`, after installing Debian's python3-venv with apt-get if the module is missing. */
async function makeVenv(dir: string): Promise<void> {
  const venv = () => run('python3', ['-m', 'venv', '--clear', dir], { cwd: dir, missing: 'no python3', failed: 'python3 -m venv failed' });
  const advice = 'install the venv module of python3 (Debian: apt-get install python3-venv)';
  const first = await venv().then(
    () => undefined,
    (error: Error) => error,
  );
  if (first === undefined) return;
  if (!existsSync('/usr/bin/apt-get')) throw new Error(`python3 -m venv cannot make a virtual environment: ${advice} (${first.message})`);
  const apt = (args: string[]) => run('apt-get', args, { cwd: dir, missing: 'no apt-get', failed: `apt-get ${args.join(' ')} failed` });
  try {
    await apt(['install', '-y', 'python3-venv']).catch(async () => {
      await apt(['update']);
      await apt(['install', '-y', 'python3-venv']);
    });
    await venv();
  } catch (error) {
    throw new Error(`python3 -m venv cannot make a virtual environment, and installing python3-venv with apt-get did not help: ${advice} (${(error as Error).message})`);
  }
}

function cacheDirOf(options: ForeignClientOptions): string {
  return options.cacheDir ?? resolveCacheDir(process.env);
}

/**
 * Runs `install` into `dir` unless `dir` already holds a finished install of `spec` (its
 * `.installed` file, written last, names the spec and the path `install` returned), one process
 * at a time: others wait on `<dir>.lock`, a folder, taken over when older than the wait.
 */
async function installOnce(dir: string, spec: string, options: ForeignClientOptions, install: () => Promise<string>): Promise<string> {
  const stamp = join(dir, '.installed');
  const finished = async (): Promise<string | undefined> => {
    const text = await readFile(stamp, 'utf8').catch(() => undefined);
    if (text === undefined) return undefined;
    const { spec: installed, path } = JSON.parse(text) as { spec?: string; path?: string };
    return installed === spec && path !== undefined && existsSync(path) ? path : undefined;
  };
  const already = await finished();
  if (already !== undefined) return already;

  const lock = `${dir}.lock`;
  await mkdir(join(dir, '..'), { recursive: true });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (age > LOCK_WAIT_MS) await rmdir(lock).catch(() => undefined);
    else if (Date.now() > deadline) throw new Error(`another process has been installing ${spec} into ${dir} for too long: if none is, remove ${lock}`);
    else await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  try {
    const installedMeanwhile = await finished();
    if (installedMeanwhile !== undefined) return installedMeanwhile;
    (options.output ?? process.stderr).write(`installing ${spec} into ${dir} (once per user)\n`);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    const path = await install();
    await writeFile(stamp, JSON.stringify({ spec, path }));
    return path;
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
}

/**
 * Runs a command and answers its stdout; rejects with `missing` when the command does not exist
 * and with `failed` and the end of its output when it exits non-zero.
 */
function run(command: string, args: string[], messages: { cwd: string; missing: string; failed: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: messages.cwd, maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 }, (error, stdout, stderr) => {
      if (error === null) return resolve(stdout);
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return reject(new Error(messages.missing));
      const tail = `${stderr}${stdout}`.trim().split('\n').slice(-5).join(' | ');
      reject(new Error(`${messages.failed} (${error.code ?? error.signal ?? error.message})${tail !== '' ? `: ${tail}` : ''}`));
    });
  });
}
