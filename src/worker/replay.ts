import { Worker } from '@temporalio/worker';
import { ReplayFailedError } from '../client/errors';
import {
  foldHistory,
  parseExportedHistory,
  runsOf,
  workflowIdOf,
  type ExportedHistory,
  type History,
} from '../history/session-history';
import { assertTodoPolicy, InvariantViolation, type TodoPolicy } from '../todo';
import { type SessionState } from '../session';
import { bundleSessionWorkflows } from './workflow-bundle';
import type { WorkerTracing } from '../tracing';

/** What a clean replay found. */
export interface ReplayReport {
  /** The state at the end of the history: what the `todos` and `session` queries would answer. */
  final: SessionState;
  /** Runs replayed (more than one when the session continued as new). */
  runs: number;
  /** Session events replayed (writes, turns, spawns, closes). */
  sessionEvents: number;
  /** History events replayed in all. */
  historyEvents: number;
}

/**
 * Replays a session history — every run of it — against the current workflow code, bundled
 * under `policy`. Two checks, both must pass: the offline fold (durable invariant on every
 * `todo/write` and on carried state, naming the history event that breaks it) and Temporal's
 * replayer running the real workflow code (determinism and the same invariant inside the
 * workflow).
 *
 * The policy is only baked into the bundle: validators do not run on replay, so the result is
 * the same under either policy, which is the promise this function lets you check.
 *
 * @param options.cacheDir where the workflow bundle is cached (default `~/.cache/agent-sessions`).
 * @param options.tracing replays with the workflow's tracing interceptors on, as a worker that
 *   traces runs it (its plugin receives the spans, which a replay does not export).
 * @throws ReplayFailedError naming the broken rule or event.
 */
export async function replaySessionHistory(
  history: ExportedHistory | History | string,
  policy: TodoPolicy,
  workflowId?: string,
  options: { cacheDir?: string; tracing?: WorkerTracing } = {},
): Promise<ReplayReport> {
  assertTodoPolicy(policy, 'replaySessionHistory()');
  let runs: History[];
  try {
    runs = isProto(history) ? [history] : runsOf(parseExportedHistory(history));
  } catch (error) {
    throw new ReplayFailedError(`replay failed: ${(error as Error).message}`);
  }
  const id = workflowId ?? runs.map(workflowIdOf).find((found) => found !== undefined) ?? 'replayed-session';
  let report: ReplayReport;
  try {
    const timeline = foldHistory(runs, id);
    report = {
      final: timeline.final,
      runs: runs.length,
      sessionEvents: timeline.steps.length,
      historyEvents: runs.reduce((sum, run) => sum + (run.events?.length ?? 0), 0),
    };
  } catch (error) {
    if (error instanceof InvariantViolation) throw new ReplayFailedError(`replay failed: ${error.message}`);
    throw error;
  }
  const tracing = options.tracing;
  const workflowBundle = await bundleSessionWorkflows(policy, { ...(options.cacheDir !== undefined ? { cacheDir: options.cacheDir } : {}), tracing: tracing !== undefined });
  const histories = runs.map((run) => ({ workflowId: id, history: run }));
  let replayed = 0;
  const replayOptions = { workflowBundle, replayName: 'agent-sessions-replay', ...(tracing !== undefined ? { plugins: [tracing.plugin] } : {}) };
  // Results come back in the order the histories are given.
  for await (const result of Worker.runReplayHistories(replayOptions, histories)) {
    replayed++;
    if (result.error !== undefined) {
      const run = runs.length > 1 ? ` (run ${replayed} of ${runs.length})` : '';
      throw new ReplayFailedError(`replay failed against the current workflow code${run}: ${describeReplayError(result.error)}`);
    }
  }
  return report;
}

function isProto(history: unknown): history is History {
  if (typeof history !== 'object' || history === null) return false;
  const first = (history as { events?: unknown[] }).events?.[0] as { eventType?: unknown } | undefined;
  // Parsed JSON names event types with strings; protobuf objects hold enum numbers.
  return first !== undefined && typeof first.eventType === 'number';
}

function describeReplayError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // Workflow task failures arrive as a debug dump of the failure with its stack; keep the sentence.
  const inner = /message: "((?:[^"\\]|\\.)*)"/.exec(error.message)?.[1];
  if (inner !== undefined) return inner.replace(/\\(.)/g, '$1');
  const parts = [error.message];
  let cause: unknown = error.cause;
  while (cause instanceof Error && parts.length < 4) {
    if (!parts.includes(cause.message)) parts.push(cause.message);
    cause = cause.cause;
  }
  return parts.join(': ');
}
