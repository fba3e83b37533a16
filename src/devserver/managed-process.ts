import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** How one run of a {@link ManagedProcess} ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What to run, how to stop it, and whether to start it again when it dies (see {@link ManagedProcess}). */
export interface ManagedProcessOptions {
  /** Short name, put in front of every output line: `[temporal] …`. */
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this user and group (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  /** Where the prefixed lines of the process's stdout and stderr go. */
  output: NodeJS.WritableStream;
  /**
   * Where this class's own lines about the process go (it exited and restarts; it would not
   * stop and is killed). `output` unless told: a process whose output goes to a log file still
   * says on the terminal that it died.
   */
  notices?: NodeJS.WritableStream;
  /** Rewrites each output line before it is shown and kept (to shorten structured logs). */
  formatLine?: (line: string) => string;
  /** The signal that asks it to stop cleanly: SIGTERM for the Temporal server, SIGINT for PostgreSQL's fast shutdown. */
  stopSignal: NodeJS.Signals;
  /** How long a clean stop may take before `killSignal` is sent. */
  stopTimeoutMs: number;
  /** The last resort: SIGKILL, or SIGQUIT for PostgreSQL (an immediate shutdown that still cleans its shared memory). */
  killSignal: NodeJS.Signals;
  /**
   * `'unless-stopped'` starts it again when it exits without {@link ManagedProcess.stop} being
   * called (docker compose's policy of the same name), after 1 s, doubling up to 30 s while it keeps
   * dying within a minute of its start; `'no'` leaves it stopped.
   */
  restart: 'unless-stopped' | 'no';
  /** Whether the child (and its output pipes) keep this Node process alive; true unless told. */
  keepsProcessAlive?: boolean;
}

/**
 * Children still running, with the signal that ends them at once. A cluster command that exits
 * without stopping them (an uncaught error) must not leave them behind; one listener serves all.
 */
const killOnExit = new Map<ChildProcess, NodeJS.Signals>();
let exitHookInstalled = false;

function killOnExitLater(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!exitHookInstalled) {
    process.once('exit', () => {
      for (const [running, last] of killOnExit) running.kill(last);
    });
    exitHookInstalled = true;
  }
  killOnExit.set(child, signal);
}

/**
 * A child process of the cluster: its output prefixed with its name and forwarded, its last lines
 * kept to explain a failure, stopped with its own clean-stop signal and, when asked, restarted
 * after it dies the way docker compose restarts a service. Each child runs in its own process
 * group, so the Ctrl-C a terminal sends to the cluster command reaches only the command, which
 * then stops the children in order.
 */
export class ManagedProcess {
  readonly name: string;
  private readonly options: ManagedProcessOptions;
  private child: ChildProcess | undefined;
  private running: Promise<ProcessExit> | undefined;
  private stopping = false;
  private restarts = 0;
  private failuresInARow = 0;
  /** Cancels a pending restart when the process is stopped for good. */
  private pendingRestart: AbortController | undefined;
  private readonly lines: string[] = [];
  private readonly lineListeners = new Set<(line: string) => void>();
  private readonly exitListeners = new Set<(exit: ProcessExit) => void>();

  constructor(options: ManagedProcessOptions) {
    this.name = options.name;
    this.options = options;
  }

  /** Process id of the current run, or `undefined` when it is not running. */
  get pid(): number | undefined {
    return this.isRunning() ? this.child?.pid : undefined;
  }

  /** Its last 40 output lines, oldest first. */
  get tail(): readonly string[] {
    return [...this.lines];
  }

  /** How many times it was started again after dying by itself. */
  get restartCount(): number {
    return this.restarts;
  }

  /** `true` from a start until that run exits. */
  isRunning(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts a run. A second call while it runs does nothing. */
  start(): void {
    if (this.isRunning()) return;
    this.stopping = false;
    this.spawnOnce();
  }

  /** Settles with the current run's exit (at once when it is not running). */
  async exited(): Promise<ProcessExit | undefined> {
    return this.running;
  }

  /** Calls `listener` with every exit of a run (including ones that will be restarted). Returns the unsubscriber. */
  onExit(listener: (exit: ProcessExit) => void): () => void {
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /**
   * Resolves with the first output line (from now on) that matches `pattern`; rejects when the
   * run exits first or `timeoutMs` passes, with the last output lines in the message.
   */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string> {
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined = undefined;
      const finish = (): void => {
        clearTimeout(timer);
        this.lineListeners.delete(onLine);
        unsubscribe();
      };
      const onLine = (line: string): void => {
        if (!pattern.test(line)) return;
        finish();
        resolve(line);
      };
      const unsubscribe = this.onExit((exit) => {
        finish();
        reject(new Error(`${this.name} exited with ${describeExit(exit)} before it was ready. ${this.describeTail()}`));
      });
      timer = setTimeout(() => {
        finish();
        reject(new Error(`${this.name} was not ready within ${Math.round(timeoutMs / 1000)}s. ${this.describeTail()}`));
      }, timeoutMs);
      this.lineListeners.add(onLine);
    });
  }

  /** Sends `signal` to the current run (fault injection); the restart policy still applies. */
  kill(signal: NodeJS.Signals): void {
    if (this.isRunning()) this.child?.kill(signal);
  }

  /**
   * Stops it for good (no restart): its stop signal, then its kill signal after the stop timeout.
   * Resolves when it has exited; safe to call twice or when it never started.
   */
  async stop(): Promise<ProcessExit | undefined> {
    this.stopping = true;
    this.pendingRestart?.abort();
    const running = this.running;
    if (!this.isRunning()) return running;
    this.child?.kill(this.options.stopSignal);
    // The timer keeps this process alive while the child stops, even a child started with
    // `keepsProcessAlive: false` (else the caller awaiting this would see its process exit, with
    // code 0, before the stop resolved), and is cleared as soon as the child is gone.
    const patience = new AbortController();
    const timedOut = await Promise.race([
      running?.then(() => false),
      sleep(this.options.stopTimeoutMs, true, { signal: patience.signal }).catch(() => false),
    ]);
    patience.abort();
    if (timedOut) {
      (this.options.notices ?? this.options.output).write(
        `[${this.name}] did not stop within ${Math.round(this.options.stopTimeoutMs / 1000)}s of ${this.options.stopSignal}; sending ${this.options.killSignal}\n`,
      );
      this.child?.kill(this.options.killSignal);
    }
    return running;
  }

  /** The last output lines, for an error message. */
  describeTail(): string {
    return this.lines.length === 0 ? '' : `Its last output:\n  ${this.lines.slice(-12).join('\n  ')}\n`;
  }

  private spawnOnce(): void {
    const { options } = this;
    const child = spawn(options.command, options.args, {
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.uid !== undefined ? { uid: options.uid } : {}),
      ...(options.gid !== undefined ? { gid: options.gid } : {}),
    });
    this.child = child;
    const started = Date.now();
    this.forward(child);
    if (options.keepsProcessAlive === false) {
      child.unref();
      for (const pipe of [child.stdout, child.stderr]) (pipe as { unref?: () => void } | null)?.unref?.();
    }
    killOnExitLater(child, options.killSignal);
    this.running = new Promise<ProcessExit>((resolve) => {
      child.once('error', (error) => {
        this.remember(`could not run ${options.command}: ${error.message}`);
        if (child.pid === undefined) resolve({ code: null, signal: null });
      });
      child.once('close', (code, signal) => resolve({ code, signal }));
    }).then((exit) => {
      killOnExit.delete(child);
      for (const listener of [...this.exitListeners]) listener(exit);
      if (!this.stopping && options.restart === 'unless-stopped') void this.restartLater(exit, Date.now() - started);
      return exit;
    });
  }

  private async restartLater(exit: ProcessExit, ranForMs: number): Promise<void> {
    // A run that lasted a minute was healthy: start the backoff again from one second.
    if (ranForMs > 60_000) this.failuresInARow = 0;
    const delayMs = Math.min(1_000 * 2 ** this.failuresInARow, 30_000);
    this.failuresInARow++;
    (this.options.notices ?? this.options.output).write(`[${this.name}] exited with ${describeExit(exit)}; restarting in ${delayMs / 1000}s\n`);
    this.pendingRestart = new AbortController();
    try {
      await sleep(delayMs, undefined, { signal: this.pendingRestart.signal });
    } catch {
      return; // stopped while waiting
    } finally {
      this.pendingRestart = undefined;
    }
    if (this.stopping || this.isRunning()) return;
    this.restarts++;
    this.spawnOnce();
  }

  private forward(child: ChildProcess): void {
    for (const stream of [child.stdout, child.stderr]) {
      let partial = '';
      stream?.on('data', (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) this.line(line);
      });
      stream?.on('end', () => {
        if (partial !== '') this.line(partial);
        partial = '';
      });
    }
  }

  private line(raw: string): void {
    const trimmed = raw.trimEnd();
    if (trimmed === '') return;
    const line = this.options.formatLine ? this.options.formatLine(trimmed) : trimmed;
    this.options.output.write(`[${this.name}] ${line}\n`);
    this.remember(line);
    for (const listener of [...this.lineListeners]) listener(line);
  }

  private remember(line: string): void {
    this.lines.push(line);
    this.lines.splice(0, Math.max(0, this.lines.length - 40));
  }
}

/** `code 1` or `signal SIGKILL`. */
export function describeExit(exit: ProcessExit): string {
  return exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code ?? 'unknown'}`;
}
