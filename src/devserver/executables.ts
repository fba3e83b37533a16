import { spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, resolve } from 'node:path';

/**
 * An error that lists every source tried for a binary, one per line and in order, each with why
 * it gave none, and then what the user can do.
 */
export class SourcesTriedError extends Error {
  /** One line per source tried, in order, each saying why it gave no binary. */
  readonly attempts: readonly string[];

  constructor(headline: string, attempts: readonly string[], advice: string) {
    super(`${headline} Tried:\n${attempts.map((attempt) => `  - ${attempt}`).join('\n')}\n${advice}`);
    this.attempts = attempts;
  }
}

/** The file name of an executable on this platform (`name.exe` on Windows). */
export function executableName(name: string): string {
  return process.platform === 'win32' ? `${name}.exe` : name;
}

/** Says why `path` cannot be run, or `undefined` when it is an executable file. */
export async function executableProblem(path: string): Promise<string | undefined> {
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

/** The absolute path of the first executable `name` in the folders of `env.PATH`, or `undefined`. */
export async function findOnPath(name: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const dirs = (env['PATH'] ?? '').split(delimiter).filter((dir) => dir !== '');
  for (const dir of dirs) {
    const candidate = resolve(dir, executableName(name));
    if (!(await executableProblem(candidate))) return candidate;
  }
  return undefined;
}

/** How a command run by {@link runStreaming} ended, with its last ten non-empty output lines. */
export interface StreamedExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  tail: string[];
}

/**
 * Runs `command`, copying its stdout and stderr to `options.output` as they come, and resolves
 * when it ends (never rejects: a spawn failure ends with `code: null` and the error in `tail`).
 */
export function runStreaming(
  command: string,
  args: readonly string[],
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

/** Says how a run ended: `<what> failed (exit 1); last output:` and its last lines. */
export function describeFailure(what: string, exit: StreamedExit): string {
  const tail = exit.tail.length > 0 ? `; last output:\n      ${exit.tail.join('\n      ')}` : '';
  return `${what} failed (exit ${exit.code ?? exit.signal})${tail}`;
}

/** `true` while a process with this id exists (also one this process may not signal: `EPERM`). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
