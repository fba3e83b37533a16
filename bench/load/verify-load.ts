/**
 * The scale check's shared half, used by `scripts/scale.ts` and
 * `test/integration/scale.test.ts`: run several `scripts/load-writer.ts` processes at once
 * ({@link runLoadWriters}), then check every session against what the writers were told
 * ({@link verifyLoad}):
 *   (a) the history holds exactly as many accepted `todo_write` updates as the writers report
 *       distinct accepted update ids: nothing lost, nothing doubled;
 *   (b) the session's final list is the list of the accepted write that answered the highest version;
 *   (c) the versions the writes answered are distinct and are exactly 1..n;
 *   (d) the update ids accepted in the history are exactly the reported ones, and each logged
 *       list is the one its writer sent; the session's version is n.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { SessionClient } from '../../src/client';
import { acceptedUpdates, historyEventsJson, type ExportedHistory } from '../../src/history';
import { todoWriteUpdate } from '../../workflows/messages';
import { loadSessionIds, type AcceptedWrite, type WriteOrder, type WriterReport, type WriteTarget } from './writer';

export type { AcceptedWrite, FailedWrite, WriteOrder, WriterReport, WriteTarget } from './writer';
export { loadSessionIds };

const ROOT = join(__dirname, '..', '..');
const WRITER_SCRIPT = join('scripts', 'load-writer.ts');

/** What to run: `writers` processes, each writing `writes` times to every session `prefix-0` … `prefix-(sessions-1)`. */
export interface LoadOptions {
  prefix: string;
  sessions: number;
  writers: number;
  writes: number;
  /** Sessions each writer drives at once (default: all of them). */
  concurrency?: number;
  /** Temporal address and task queue for the writers; the rest of the environment is inherited. */
  address: string;
  taskQueue: string;
  /** Kill the writers (they are this process's children) after this long. Default 10 minutes. */
  timeoutMs?: number;
  /**
   * Give each writer its own share of the sessions (writer w takes `prefix-n` for n ≡ w mod
   * `writers`) instead of all of them, so every session has one writer. Default false.
   */
  split?: boolean;
  /** The writers' `--order` (default `by-session`). */
  order?: WriteOrder;
  /** The writers' `--workflow` (default `session`; `bare` writes no-op updates to bare workflows on `taskQueue`). */
  workflow?: WriteTarget;
}

/** How one writer process ended. */
export interface WriterExit {
  writer: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** Its report, or `undefined` when it printed none. */
  report: WriterReport | undefined;
}

/** The outcome of {@link runLoadWriters}. */
export interface LoadRun {
  sessions: string[];
  exits: WriterExit[];
  reports: WriterReport[];
  /** From spawning the first writer until the last one exited (process start-up included). */
  wallMs: number;
  /** The longest time a writer spent writing (from its first write to its last answer). */
  writeMs: number;
}

/** Spawns the writer processes at once and waits for all of them. */
export async function runLoadWriters(options: LoadOptions): Promise<LoadRun> {
  if (options.split === true && options.sessions < options.writers) {
    throw new RangeError(`split: ${options.writers} writers need at least as many sessions, got ${options.sessions}`);
  }
  const sessions = loadSessionIds(options.prefix, options.sessions);
  const started = Date.now();
  const exits = await Promise.all(
    Array.from({ length: options.writers }, (_, writer) => runWriterProcess(writer, options)),
  );
  const reports = exits.flatMap((exit) => (exit.report !== undefined ? [exit.report] : []));
  return {
    sessions,
    exits,
    reports,
    wallMs: Date.now() - started,
    writeMs: Math.max(0, ...reports.map((report) => report.ms)),
  };
}

function runWriterProcess(writer: number, options: LoadOptions): Promise<WriterExit> {
  const share = options.split === true ? loadSessionIds(options.prefix, options.sessions).filter((_, n) => n % options.writers === writer) : undefined;
  const args = [
    '--import',
    'tsx',
    WRITER_SCRIPT,
    '--writer',
    String(writer),
    ...(share !== undefined ? ['--sessions', share.join(',')] : ['--prefix', options.prefix, '--count', String(options.sessions)]),
    '--writes',
    String(options.writes),
    '--concurrency',
    String(options.concurrency ?? share?.length ?? options.sessions),
    ...(options.order !== undefined ? ['--order', options.order] : []),
    ...(options.workflow !== undefined ? ['--workflow', options.workflow] : []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: options.address, AGENT_SESSIONS_TASK_QUEUE: options.taskQueue },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 10 * 60_000);
  return new Promise((resolve) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ writer, code: null, signal: null, stderr: `${stderr}${error.message}\n`, report: undefined });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ writer, code, signal, stderr, report: parseWriterReport(stdout) });
    });
  });
}

/** The report in a writer's stdout: its last line that is a JSON object with `writer`. */
export function parseWriterReport(stdout: string): WriterReport | undefined {
  for (const line of stdout.split('\n').reverse()) {
    if (!line.startsWith('{')) continue;
    try {
      const value = JSON.parse(line) as Partial<WriterReport>;
      if (typeof value.writer === 'number' && Array.isArray(value.accepted) && Array.isArray(value.failed)) return value as WriterReport;
    } catch {
      // not the report
    }
  }
  return undefined;
}

/** An accepted update found in a history. */
export interface LoggedUpdate {
  updateId: string;
  /** The `todos` of its arguments, as logged. */
  todos: unknown;
}

/** The accepted `todo_write` updates of a history (every run of it), in history order. */
export function acceptedTodoWrites(history: ExportedHistory): LoggedUpdate[] {
  return acceptedUpdates(history, todoWriteUpdate.name).map(({ updateId, args }) => ({ updateId, todos: (args[0] as { todos?: unknown } | undefined)?.todos }));
}

/** Workflow tasks that failed or timed out in a history (every run of it). */
export function countTaskRetries(history: ExportedHistory): number {
  return historyEventsJson(history).filter(
    (event) => event.workflowTaskFailedEventAttributes !== undefined || event.workflowTaskTimedOutEventAttributes !== undefined,
  ).length;
}

/** What was found for one session. */
export interface SessionVerification {
  session: string;
  /** Distinct update ids the writers report as accepted. */
  reported: number;
  /** Accepted `todo_write` updates in the history. */
  inHistory: number;
  /** The session's version at the end. */
  version: number;
  /** Workflow tasks that failed or timed out in its history: retried by Temporal, not a problem, but a cost. */
  taskRetries: number;
  problems: string[];
}

/** The outcome of {@link verifyLoad}. */
export interface LoadVerification {
  ok: boolean;
  /** Every problem found, each naming its session; empty when `ok`. */
  problems: string[];
  sessions: SessionVerification[];
  /** Accepted writes over all writers (distinct update ids). */
  accepted: number;
  /** Writes that failed for good. */
  failed: number;
  /** Sends beyond the first, over all accepted writes. */
  retries: number;
  /** Workflow tasks that failed or timed out, over all sessions. */
  taskRetries: number;
}

/**
 * Checks every session of a load run against the writers' reports (see the file comment).
 * `expectedPerSession`, when given, is how many writes each session should have accepted
 * (writers × writes when every write was meant to succeed).
 */
export async function verifyLoad(
  client: SessionClient,
  sessions: readonly string[],
  reports: readonly WriterReport[],
  options: { expectedPerSession?: number; concurrency?: number } = {},
): Promise<LoadVerification> {
  const accepted = reports.flatMap((report) => report.accepted);
  const failed = reports.flatMap((report) => report.failed);
  const results: SessionVerification[] = new Array(sessions.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let n = next++; n < sessions.length; n = next++) {
      const session = sessions[n]!;
      results[n] = await verifySession(
        client,
        session,
        accepted.filter((write) => write.session === session),
        failed.filter((write) => write.session === session).map((write) => `${write.updateId}: ${write.error}`),
        options.expectedPerSession,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, sessions.length) }, lane));
  const known = new Set(sessions);
  const stray = accepted.filter((write) => !known.has(write.session)).map((write) => `a writer reports a write to unknown session ${write.session}`);
  const problems = [...stray, ...results.flatMap((result) => result.problems.map((problem) => `${result.session}: ${problem}`))];
  return {
    ok: problems.length === 0,
    problems,
    sessions: results,
    accepted: new Set(accepted.map((write) => write.updateId)).size,
    failed: failed.length,
    retries: accepted.reduce((sum, write) => sum + write.retries, 0),
    taskRetries: results.reduce((sum, result) => sum + result.taskRetries, 0),
  };
}

async function verifySession(
  client: SessionClient,
  session: string,
  writes: AcceptedWrite[],
  failures: string[],
  expected: number | undefined,
): Promise<SessionVerification> {
  const problems = failures.map((failure) => `write failed for good, its outcome unknown: ${failure}`);
  const byId = new Map<string, AcceptedWrite>();
  for (const write of writes) {
    if (byId.has(write.updateId)) problems.push(`update ${write.updateId} is reported accepted twice`);
    byId.set(write.updateId, write);
  }
  const n = byId.size;
  if (expected !== undefined && n !== expected) problems.push(`${n} writes accepted, expected ${expected}`);

  const history = await client.exportHistory(session);
  const snapshot = await client.session(session);

  // (a) nothing lost, nothing doubled
  const inHistory = acceptedTodoWrites(history).length;
  if (inHistory !== n) problems.push(`history holds ${inHistory} accepted todo_write updates, the writers report ${n}`);

  // (b) the final list is the list of the write that answered the highest version
  const last = [...byId.values()].reduce<AcceptedWrite | undefined>((top, write) => (top === undefined || write.version > top.version ? write : top), undefined);
  if (last !== undefined && !isDeepStrictEqual(snapshot.todos, last.todos)) {
    problems.push(`final list ${JSON.stringify(snapshot.todos)} is not that of ${last.updateId} (version ${last.version}): ${JSON.stringify(last.todos)}`);
  }
  if (last === undefined && snapshot.todos !== null) problems.push(`no write accepted, yet the list is ${JSON.stringify(snapshot.todos)}`);

  // (c) versions distinct and exactly 1..n
  const versions = [...byId.values()].map((write) => write.version).sort((x, y) => x - y);
  const gaps = versions.filter((version, k) => version !== k + 1);
  if (gaps.length > 0) {
    const repeated = versions.filter((version, k) => k > 0 && versions[k - 1] === version);
    problems.push(
      `answered versions are not 1..${n}` +
        (repeated.length > 0 ? ` (repeated: ${[...new Set(repeated)].join(', ')})` : '') +
        ` (first off: ${versions.slice(0, 10).join(', ')}${versions.length > 10 ? ', …' : ''})`,
    );
  }
  if (snapshot.version !== n) problems.push(`session is at version ${snapshot.version}, expected ${n} (one per accepted write)`);

  // (d) the history's update ids are exactly the accepted set, each with the list its writer sent
  const logged = acceptedTodoWrites(history);
  const seen = new Set<string>();
  for (const entry of logged) {
    if (seen.has(entry.updateId)) problems.push(`update ${entry.updateId} is accepted twice in the history`);
    seen.add(entry.updateId);
    const write = byId.get(entry.updateId);
    if (write === undefined) problems.push(`history accepted update ${entry.updateId}, which no writer reports accepted`);
    else if (!isDeepStrictEqual(entry.todos, write.todos)) problems.push(`history logs ${JSON.stringify(entry.todos)} for ${entry.updateId}, its writer sent ${JSON.stringify(write.todos)}`);
  }
  for (const updateId of byId.keys()) {
    if (!seen.has(updateId)) problems.push(`accepted update ${updateId} is missing from the history`);
  }

  return { session, reported: n, inHistory, version: snapshot.version, taskRetries: countTaskRetries(history), problems };
}

/** Writes per second, one decimal. */
export function writesPerSecond(writes: number, ms: number): number {
  return ms > 0 ? Math.round((writes / ms) * 10_000) / 10 : 0;
}
