/**
 * Shared pieces of the fault tests (`test/faults/`): a Temporal dev server of the test's own
 * that can be SIGKILLed and restarted on the same SQLite file, worker processes that can be
 * SIGKILLed, writes whose outcome (result, error or no answer) is recorded per update id, and
 * the check of those outcomes against the session's history: nothing accepted lost, nothing
 * applied twice, history in acceptance order.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { type SessionClient } from '../../src/client';
import { findFreePort, startDevServer, type DevServerHandle } from '../../src/devserver';
import { foldHistory, historyEventsJson, runCount, runsOf, type ExportedHistory } from '../../src/history';
import { type TodoItem } from '../../src/todo';
import { describeError } from '../../bench/load/writer';
import { acceptedTodoWrites, countTaskRetries } from '../../bench/load/verify-load';
import { spawnCli } from '../helpers';

/** Whether the slow fault tests run (CI sets it). */
export const LONG_TESTS = process.env.AGENT_SESSIONS_LONG_TESTS === '1';

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Every worker process and dev server a fault test started, so `killStrays()` (and process exit) can end them. */
const children = new Set<ChildProcess>();
const servers = new Set<DevServerHandle>();
/** The temp folders of those dev servers' SQLite files. */
const dataDirs = new Set<string>();

process.once('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const server of servers) if (server.pid !== undefined) killQuietly(server.pid);
});

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** SIGKILLs every worker process this test file started and has not ended, stops its dev servers and removes their files. */
export async function killStrays(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await gone;
      }
      children.delete(child);
    }),
  );
  await Promise.all([...servers].map((server) => server.stop()));
  servers.clear();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  dataDirs.clear();
}

/**
 * A Temporal dev server of this test's own, on a free port and a temp SQLite file: the shared
 * server at TEMPORAL_ADDRESS must never be killed.
 */
export class OwnTemporal {
  private constructor(
    readonly port: number,
    readonly dbFile: string,
    private handle: DevServerHandle,
  ) {}

  /** Starts one on a free port (or `port`) with a fresh SQLite file. */
  static async start(port?: number): Promise<OwnTemporal> {
    const chosen = port ?? (await findFreePort());
    const dbFile = join(mkdtempSync(join(tmpdir(), 'agent-sessions-faults-')), 'temporal.sqlite');
    dataDirs.add(dirname(dbFile));
    const handle = await startDevServer({ port: chosen, uiPort: false, stdio: 'ignore', dbFile });
    servers.add(handle);
    return new OwnTemporal(chosen, dbFile, handle);
  }

  get address(): string {
    return this.handle.address;
  }

  /** SIGKILLs the server process and waits until it is gone. */
  async kill(): Promise<void> {
    const pid = this.handle.pid;
    if (pid === undefined) throw new Error('this dev server runs under the SDK download fallback and has no pid to kill');
    killQuietly(pid);
    await this.handle.exited;
    servers.delete(this.handle);
  }

  /** Starts a new server on the same port and SQLite file; resolves once it serves. */
  async restart(): Promise<void> {
    this.handle = await startDevServer({ port: this.port, uiPort: false, stdio: 'ignore', dbFile: this.dbFile });
    servers.add(this.handle);
  }
}

/** A worker running as `agent-sessions worker` in its own process. */
export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
  output(): string;
  /** SIGKILL, and wait until the process is gone. */
  kill(): Promise<void>;
}

/**
 * Starts `agent-sessions worker --allow-parallel-in-progress true` (the built `dist/`) against
 * `address` on `taskQueue` (with `env` besides: a model's `OPENAI_BASE_URL`), and resolves once it
 * says it is polling.
 */
export async function startWorkerProcess(address: string, taskQueue: string, timeoutMs = 60_000, env: NodeJS.ProcessEnv = {}): Promise<WorkerProcess> {
  const { child, exited, output } = await spawnCli(['worker', '--allow-parallel-in-progress', 'true'], {
    ...env,
    TEMPORAL_ADDRESS: address,
    AGENT_SESSIONS_TASK_QUEUE: taskQueue,
  });
  children.add(child);
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  const deadline = Date.now() + timeoutMs;
  while (!/worker polling/.test(output())) {
    if (code !== undefined) throw new Error(`the worker process exited with ${String(code)} before polling: ${output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the worker process did not start polling within ${timeoutMs} ms: ${output()}`);
    }
    await sleep(50);
  }
  return {
    child,
    pid: child.pid!,
    exited,
    output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      children.delete(child);
    },
  };
}

/** What one write ended with. */
export interface WriteOutcome {
  session: string;
  updateId: string;
  todos: TodoItem[];
  /** The version it answered, when the call returned a result. */
  version?: number;
  /** The error it threw (one line, with causes), when it did not. */
  error?: string;
  /** Whether it neither answered nor threw within the time allowed. */
  hung?: boolean;
  /** When the call was made and when it settled, in ms since the epoch. */
  startedAt: number;
  endedAt: number;
  /** The version a later retry under the same update id answered, for a write that failed. */
  retriedVersion?: number;
  retryError?: string;
}

/** A distinct list for write `i` of writer `writer`. */
export function writeTodos(writer: number, i: number): TodoItem[] {
  return [
    { content: `writer ${writer} write ${i}`, status: 'in_progress' },
    { content: `done by writer ${writer} before write ${i}`, status: 'completed' },
  ];
}

/**
 * One `todoWrite` through the client library, as a caller sees it: no retry of its own, the
 * outcome recorded. A call that neither answers nor throws within `timeoutMs` is recorded as
 * hung (a client must never wait forever).
 */
export async function recordedWrite(
  client: SessionClient,
  session: string,
  todos: TodoItem[],
  updateId: string,
  timeoutMs: number,
): Promise<WriteOutcome> {
  const startedAt = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const call = client.todoWrite(session, { todos }, { updateId });
  const timeout = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), timeoutMs)));
  try {
    const answer = await Promise.race([call, timeout]);
    if (answer === 'hung') {
      call.catch(() => undefined);
      return { session, updateId, todos, hung: true, error: `no answer within ${timeoutMs} ms`, startedAt, endedAt: Date.now() };
    }
    return { session, updateId, todos, version: answer.version, startedAt, endedAt: Date.now() };
  } catch (error) {
    return { session, updateId, todos, error: describeError(error), startedAt, endedAt: Date.now() };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends every failed write again under its own update id (what a caller that got an error
 * should do) and records what the retry answered: an applied write must answer its first
 * result, an unapplied one is applied now, once.
 */
export async function retryFailed(client: SessionClient, outcomes: WriteOutcome[], timeoutMs: number): Promise<void> {
  await Promise.all(
    outcomes
      .filter((outcome) => outcome.version === undefined)
      .map(async (outcome) => {
        const retry = await recordedWrite(client, outcome.session, outcome.todos, outcome.updateId, timeoutMs);
        if (retry.version !== undefined) outcome.retriedVersion = retry.version;
        else outcome.retryError = retry.error ?? 'no answer';
      }),
  );
}

/** A `todo_write` the session applied (changed its version), as the fold of its history finds it. */
export interface AppliedWrite {
  updateId: string;
  version: number;
  run: number;
}

/** The writes a history applied, in history order (every run, oldest first). */
export function appliedTodoWrites(history: ExportedHistory, session: string): AppliedWrite[] {
  const { steps } = foldHistory(runsOf(history), session);
  const applied: AppliedWrite[] = [];
  let previous = 0;
  for (const step of steps) {
    if (step.event.type === 'todo/write' && step.state.version !== previous) {
      applied.push({ updateId: step.event.updateId ?? '', version: step.state.version, run: step.run });
    }
    previous = step.state.version;
  }
  return applied;
}

/** How many workflow tasks a worker process (by pid) started in a history. */
export function tasksStartedBy(history: ExportedHistory, pid: number): number {
  return (historyEventsJson(history) as Array<{ workflowTaskStartedEventAttributes?: { identity?: string } }>).filter((event) =>
    event.workflowTaskStartedEventAttributes?.identity?.startsWith(`${pid}@`),
  ).length;
}

/** What {@link verifyWrites} found for one session. */
export interface WriteVerification {
  problems: string[];
  /** Writes the history applied. */
  applied: number;
  /** Writes whose first call answered a result. */
  answered: number;
  /** Writes whose first call threw (or hung), and what they threw. */
  failed: WriteOutcome[];
  /** Update ids accepted more than once in history (a retry answered from its receipt in a later run). */
  reaccepted: number;
  /** Workflow tasks that failed or timed out (the killed worker's, retried by Temporal). */
  taskRetries: number;
  /** Runs of the session (continue-as-new). */
  runs: number;
}

/**
 * Checks a session whose only events are the recorded writes against its history:
 * - every write that answered a version is applied, once, at exactly that version (nothing
 *   accepted is lost); a write that failed and was retried under its update id answers the
 *   version it was applied at (nothing applied twice);
 * - the history applies no update id twice and none that no caller sent, each with the list
 *   its caller sent; its applied writes, in history order, are the answered writes sorted by
 *   the version they answered (acceptance order);
 * - the session's version is the number of applied writes, and its list is that of the write
 *   with the highest version.
 */
export async function verifyWrites(client: SessionClient, session: string, outcomes: readonly WriteOutcome[]): Promise<WriteVerification> {
  const problems: string[] = [];
  const history = await client.exportHistory(session);
  const snapshot = await client.session(session);
  const byId = new Map<string, WriteOutcome>();
  for (const outcome of outcomes) {
    if (byId.has(outcome.updateId)) problems.push(`update id ${outcome.updateId} was sent by two different writes`);
    byId.set(outcome.updateId, outcome);
  }

  const applied = appliedTodoWrites(history, session);
  const appliedAt = new Map<string, number>();
  for (const write of applied) {
    if (appliedAt.has(write.updateId)) problems.push(`update ${write.updateId} is applied twice (versions ${appliedAt.get(write.updateId)} and ${write.version})`);
    appliedAt.set(write.updateId, write.version);
    if (!byId.has(write.updateId)) problems.push(`history applies update ${write.updateId} (version ${write.version}), which no caller sent`);
  }

  const logged = acceptedTodoWrites(history);
  const acceptedTimes = new Map<string, number>();
  for (const entry of logged) {
    acceptedTimes.set(entry.updateId, (acceptedTimes.get(entry.updateId) ?? 0) + 1);
    const sent = byId.get(entry.updateId);
    if (sent !== undefined && !isDeepStrictEqual(entry.todos, sent.todos)) {
      problems.push(`history logs ${JSON.stringify(entry.todos)} for ${entry.updateId}, its caller sent ${JSON.stringify(sent.todos)}`);
    }
  }
  for (const [updateId, times] of acceptedTimes) {
    if (times > 1 && !appliedAt.has(updateId)) problems.push(`update ${updateId} is accepted ${times} times and never applied`);
  }
  // Independent of the fold: each distinct accepted update id is one applied write.
  if (acceptedTimes.size !== applied.length) problems.push(`history accepts ${acceptedTimes.size} distinct update ids but applies ${applied.length} writes`);

  for (const outcome of outcomes) {
    const at = appliedAt.get(outcome.updateId);
    if (outcome.version !== undefined) {
      if (at === undefined) problems.push(`write ${outcome.updateId} answered version ${outcome.version} but is not in the history (lost)`);
      else if (at !== outcome.version) problems.push(`write ${outcome.updateId} answered version ${outcome.version} but the history applied it at ${at}`);
    } else if (outcome.retriedVersion !== undefined) {
      if (at === undefined) problems.push(`write ${outcome.updateId} failed, its retry answered version ${outcome.retriedVersion}, but it is not in the history`);
      else if (at !== outcome.retriedVersion) problems.push(`write ${outcome.updateId} failed, its retry answered version ${outcome.retriedVersion}, the history applied it at ${at}`);
    } else if (outcome.retryError !== undefined) {
      problems.push(`write ${outcome.updateId} failed (${outcome.error ?? '?'}) and so did its retry (${outcome.retryError})`);
    }
  }

  // Acceptance order: the history's applied writes are the answered ones in order of the versions they answered.
  const answeredOrder = outcomes
    .map((outcome) => ({ updateId: outcome.updateId, version: outcome.version ?? outcome.retriedVersion }))
    .filter((outcome): outcome is { updateId: string; version: number } => outcome.version !== undefined)
    .sort((x, y) => x.version - y.version);
  const versions = answeredOrder.map((outcome) => outcome.version);
  if (new Set(versions).size !== versions.length) problems.push('two writes answered the same version');
  const historyOrder = applied.map((write) => write.updateId);
  if (!isDeepStrictEqual(historyOrder, answeredOrder.map((outcome) => outcome.updateId))) {
    const differs = historyOrder.findIndex((id, k) => answeredOrder[k]?.updateId !== id);
    const firstOff = differs === -1 ? historyOrder.length : differs;
    problems.push(
      `history applies ${historyOrder.length} writes, callers got ${answeredOrder.length} results; the orders differ first at position ${firstOff} ` +
        `(history ${historyOrder[firstOff] ?? '-'}, answered ${answeredOrder[firstOff]?.updateId ?? '-'})`,
    );
  }

  if (snapshot.version !== applied.length) problems.push(`session is at version ${snapshot.version}, history applies ${applied.length} writes`);
  const last = answeredOrder.at(-1);
  const lastTodos = last !== undefined ? byId.get(last.updateId)?.todos : undefined;
  if (last !== undefined && !isDeepStrictEqual(snapshot.todos, lastTodos)) {
    problems.push(`final list ${JSON.stringify(snapshot.todos)} is not that of ${last.updateId} (version ${last.version})`);
  }

  return {
    problems: problems.map((problem) => `${session}: ${problem}`),
    applied: applied.length,
    answered: outcomes.filter((outcome) => outcome.version !== undefined).length,
    failed: outcomes.filter((outcome) => outcome.version === undefined),
    reaccepted: [...acceptedTimes.values()].filter((times) => times > 1).length,
    taskRetries: countTaskRetries(history),
    runs: runCount(history),
  };
}
