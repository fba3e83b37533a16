/**
 * The library half of one load-writing client process for the scale check (`scripts/scale.ts`,
 * `test/integration/scale.test.ts`). For each of its sessions it performs `--writes` writes one
 * after the other (sessions in parallel, at most `--concurrency` at a time), each write a
 * distinct whole list under the deterministic update id `<session>:<writer>:<i>`. A write that
 * fails for a transient reason (connection, unavailable, resource exhausted, timeout) is sent
 * again with the SAME update id, so Temporal applies it at most once; any other failure (a
 * rejection, a closed session) is permanent.
 *
 * Run: npx tsx scripts/load-writer.ts --writer 0 --sessions a,b,c --writes 20 [--concurrency 8]
 *      (or --prefix load --count 50 instead of --sessions: sessions load-0 … load-49)
 *      [--order by-session|round-robin] [--workflow session|bare]
 * `--order round-robin` (for the benchmark's scale measurement): each of the `--concurrency`
 * lanes owns every concurrency-th session and writes them in rounds (write 0 to all of its
 * sessions, then write 1, …), so every session is open from the first round on; still one write
 * at a time per session. `--workflow bare` sends the benchmark's no-op update
 * (`bench/baseline-workflows.ts`) with update-with-start instead of `todo_write`, to bare
 * workflows on the same task queue: Temporal's floor under the same load.
 * Env: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, AGENT_SESSIONS_TASK_QUEUE (as every client);
 *      LOAD_WRITER_SESSIONS, LOAD_WRITER_WRITES, LOAD_WRITER_INDEX, LOAD_WRITER_CONCURRENCY
 *      stand in for the flags.
 *
 * Prints ONE JSON line on stdout when done, a {@link WriterReport}; exits 0 unless a write
 * failed permanently (then 1), or 2 for a bad setting.
 */
import { parseArgs } from 'node:util';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { SessionClient } from '../../src/client/session-client';
import { isBusy } from '../../src/client/transient-errors';
import { AgentSessionsError } from '../../src/client/errors';
import { loadSettings, type Settings } from '../../src/config';
import type { TodoItem } from '../../src/todo';
import { BARE_WORKFLOW_TYPE, noopUpdate } from '../baseline-workflows';

/** A write the session accepted, with the version it answered. */
export interface AcceptedWrite {
  session: string;
  updateId: string;
  version: number;
  todos: TodoItem[];
  /** How many times it was sent again after a transient failure. */
  retries: number;
  /** When its first attempt was sent, when the attempt that was answered was sent, and when that answer came (ms since the epoch). */
  firstSentAt: number;
  sentAt: number;
  answeredAt: number;
  /** The answered attempt's round trip in milliseconds (performance.now; absent in reports built by hand). */
  latencyMs?: number;
}

/** A write that failed for good (its outcome on the server may be unknown). */
export interface FailedWrite {
  session: string;
  updateId: string;
  error: string;
  /** Whether the last error was a transient one (retries ran out): the write may still have landed. */
  transient: boolean;
  /** When its first attempt was sent, and when the last attempt failed (ms since the epoch). */
  firstSentAt: number;
  failedAt: number;
}

/** What one writer prints: its one line of JSON. */
export interface WriterReport {
  writer: number;
  accepted: AcceptedWrite[];
  failed: FailedWrite[];
  /** From the first write to the last answer, in milliseconds. */
  ms: number;
}

/** The list written by writer `writer` as its write `i` to any session: distinct per (writer, i). */
export function loadTodos(writer: number, i: number): TodoItem[] {
  return [
    { content: `writer ${writer} write ${i}`, status: 'in_progress' },
    { content: `checked by writer ${writer} before write ${i}`, status: 'completed' },
    { content: `next after writer ${writer} write ${i}`, status: 'pending' },
  ];
}

/** The update id of writer `writer`'s write `i` to `session`. */
export function loadUpdateId(session: string, writer: number, i: number): string {
  return `${session}:${writer}:${i}`;
}

/** The sessions `--prefix P --count N` names: `P-0` … `P-(N-1)`. */
export function loadSessionIds(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, n) => `${prefix}-${n}`);
}

/** gRPC codes worth sending the same write again for. */
const TRANSIENT_CODES = new Set([
  1, // CANCELLED (the update call's long poll was cut)
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED (e.g. too many in-flight updates on one workflow)
  10, // ABORTED
  13, // INTERNAL (a dropped stream)
  14, // UNAVAILABLE
]);
const TRANSIENT_MESSAGE =
  /UNAVAILABLE|RESOURCE_EXHAUSTED|DEADLINE_EXCEEDED|ABORTED|ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|socket hang up|connection|in-flight|Update.*(timeout|cancelled)|MultiOperationExecutionAborted/i;

/**
 * Whether a failed write may be sent again under its update id: connection trouble, an
 * unavailable or overloaded server, a timed-out update call. Never one of this project's own
 * errors (a rejected list, a closed session), which would answer the same again.
 */
export function isTransientWriteError(error: unknown): boolean {
  if (error instanceof AgentSessionsError) return false;
  if (isBusy(error)) return true;
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number' && TRANSIENT_CODES.has(code)) return true;
    if (typeof code === 'string' && /^E(CONNRESET|CONNREFUSED|PIPE|TIMEDOUT)$/.test(code)) return true;
    if (e.name === 'WorkflowUpdateFailedError') return false; // the workflow answered: not transient
    if (e.name === 'WorkflowUpdateRPCTimeoutOrCancelledError') return true;
    if (TRANSIENT_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/** Describes an error in one line, with its causes. */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  let e: unknown = error;
  for (; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    parts.push(`${e.name}${code !== undefined ? `[${String(code)}]` : ''}: ${e.message}`);
  }
  if (parts.length === 0) parts.push(String(e));
  return parts.join(' <- ');
}

/** In which order a writer's lanes go through their writes (see the file comment). */
export type WriteOrder = 'by-session' | 'round-robin';
/** What a writer writes to: sessions (`todo_write`) or the benchmark's bare workflows (no-op update). */
export type WriteTarget = 'session' | 'bare';

interface WriterSettings {
  writer: number;
  sessions: string[];
  writes: number;
  concurrency: number;
  /** Attempts per write, the first included. */
  maxAttempts: number;
  /** Default `by-session`. */
  order?: WriteOrder;
  /** Default `session`. */
  workflow?: WriteTarget;
  /** The task queue bare workflows start on (the sessions' one, from the environment). */
  taskQueue?: string;
}

function settingsFrom(argv: string[], env: NodeJS.ProcessEnv): WriterSettings {
  const { values } = parseArgs({
    args: argv,
    options: {
      sessions: { type: 'string' },
      prefix: { type: 'string' },
      count: { type: 'string' },
      writes: { type: 'string' },
      writer: { type: 'string' },
      concurrency: { type: 'string' },
      'max-attempts': { type: 'string' },
      order: { type: 'string' },
      workflow: { type: 'string' },
    },
    strict: true,
  });
  const int = (name: string, raw: string | undefined, fallback: number | undefined, min: number): number => {
    if (raw === undefined || raw === '') {
      if (fallback === undefined) throw new Error(`--${name} is required`);
      return fallback;
    }
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer ≥ ${min}, got "${raw}"`);
    return value;
  };
  let sessions: string[];
  const list = values.sessions ?? env.LOAD_WRITER_SESSIONS;
  if (list !== undefined && list !== '') {
    sessions = list.split(',').map((id) => id.trim()).filter((id) => id !== '');
  } else if (values.prefix !== undefined) {
    const count = int('count', values.count, undefined, 1);
    sessions = loadSessionIds(values.prefix, count);
  } else {
    throw new Error('give the sessions: --sessions id1,id2,... or --prefix P --count N');
  }
  if (sessions.length === 0) throw new Error('--sessions names no session');
  const order = values.order ?? 'by-session';
  if (order !== 'by-session' && order !== 'round-robin') throw new Error(`--order must be by-session or round-robin, got "${order}"`);
  const workflow = values.workflow ?? 'session';
  if (workflow !== 'session' && workflow !== 'bare') throw new Error(`--workflow must be session or bare, got "${workflow}"`);
  return {
    order,
    workflow,
    sessions,
    writer: int('writer', values.writer ?? env.LOAD_WRITER_INDEX, undefined, 0),
    writes: int('writes', values.writes ?? env.LOAD_WRITER_WRITES, undefined, 1),
    concurrency: int('concurrency', values.concurrency ?? env.LOAD_WRITER_CONCURRENCY, 8, 1),
    maxAttempts: int('max-attempts', values['max-attempts'], 30, 1),
  };
}

/** One write's call: `todo_write` through the library, or the no-op update on a bare workflow; answers the version. */
async function send(client: SessionClient, settings: WriterSettings, session: string, todos: TodoItem[], updateId: string): Promise<number> {
  if (settings.workflow !== 'bare') return (await client.todoWrite(session, { todos }, { updateId })).version;
  const result = await client.temporal.workflow.executeUpdateWithStart(noopUpdate, {
    args: [{ todos }],
    updateId,
    startWorkflowOperation: new WithStartWorkflowOperation(BARE_WORKFLOW_TYPE, {
      workflowId: session,
      taskQueue: settings.taskQueue ?? 'agent-sessions',
      args: [],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return result.n;
}

/** Sends one write, again under the same update id while it fails transiently. */
async function writeOnce(
  client: SessionClient,
  settings: WriterSettings,
  session: string,
  i: number,
): Promise<{ accepted: AcceptedWrite } | { failed: FailedWrite }> {
  const updateId = loadUpdateId(session, settings.writer, i);
  const todos = loadTodos(settings.writer, i);
  const firstSentAt = Date.now();
  for (let attempt = 1; ; attempt++) {
    const sentAt = Date.now();
    const start = performance.now();
    try {
      const version = await send(client, settings, session, todos, updateId);
      const latencyMs = performance.now() - start;
      return { accepted: { session, updateId, version, todos, retries: attempt - 1, firstSentAt, sentAt, answeredAt: Date.now(), latencyMs } };
    } catch (error) {
      const transient = isTransientWriteError(error);
      if (!transient || attempt >= settings.maxAttempts) {
        return { failed: { session, updateId, error: describeError(error), transient, firstSentAt, failedAt: Date.now() } };
      }
      process.stderr.write(`load-writer ${settings.writer}: ${updateId} attempt ${attempt} failed, retrying: ${describeError(error)}\n`);
      const pause = Math.min(2000, 50 * 2 ** Math.min(attempt, 6)) * (0.5 + Math.random() / 2);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Runs the writer: every session's writes in order, sessions `concurrency` at a time (or in rounds, with `round-robin`). */
export async function runWriter(client: SessionClient, settings: WriterSettings): Promise<WriterReport> {
  const accepted: AcceptedWrite[] = [];
  const failed: FailedWrite[] = [];
  // Each writer starts at a different session, so the writers meet on every session early.
  const order = settings.sessions.map((_, n) => settings.sessions[(n + settings.writer) % settings.sessions.length]!);
  const lanes = Math.min(settings.concurrency, order.length);
  const write = async (session: string, i: number): Promise<void> => {
    const outcome = await writeOnce(client, settings, session, i);
    if ('accepted' in outcome) accepted.push(outcome.accepted);
    else failed.push(outcome.failed);
  };
  let next = 0;
  const bySession = async (): Promise<void> => {
    for (let n = next++; n < order.length; n = next++) {
      for (let i = 0; i < settings.writes; i++) await write(order[n]!, i);
    }
  };
  const roundRobin = async (lane: number): Promise<void> => {
    const owned = order.filter((_, n) => n % lanes === lane);
    for (let i = 0; i < settings.writes; i++) {
      for (const session of owned) await write(session, i);
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: lanes }, (_, lane) => (settings.order === 'round-robin' ? roundRobin(lane) : bySession())));
  return { writer: settings.writer, accepted, failed, ms: Date.now() - started };
}

/**
 * The writer process's whole run: settings from argv and the environment, the writes, one JSON
 * report line on stdout. Resolves with the exit code (0, 1 when a write failed for good, 2 for a bad setting).
 */
export async function writerMain(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let settings: WriterSettings;
  let temporal: Settings['temporal'];
  try {
    settings = settingsFrom([...argv], env);
    // A program, like the CLI: the connection (TEMPORAL_ADDRESS, AGENT_SESSIONS_TASK_QUEUE, …) comes from its environment.
    temporal = loadSettings(env).temporal;
  } catch (error) {
    process.stderr.write(`load-writer: ${(error as Error).message}\n`);
    return 2;
  }
  const client = await SessionClient.connect(temporal);
  try {
    const report = await runWriter(client, { ...settings, taskQueue: temporal.taskQueue });
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return report.failed.length === 0 ? 0 : 1;
  } finally {
    await client.closeConnection();
  }
}
