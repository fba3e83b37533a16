import { Worker } from '@temporalio/worker';
import { foldHistory, parseHistory, type History, type HistoryJson } from '../history/session-history';
import { assertTodoPolicy, InvariantViolation, type SessionState, type TodoPolicy } from '../todo';
import { bundleSessionWorkflows } from './workflow-bundle';

/** What a clean replay found. */
export interface ReplayReport {
  /** The state at the end of the history: the list a `todos` query would answer. */
  final: SessionState;
  /** Session events replayed (writes, turns, close). */
  sessionEvents: number;
  /** History events replayed in all. */
  historyEvents: number;
}

/** Thrown when a history does not replay cleanly; the message names the event or the rule. */
export class ReplayFailedError extends Error {
  override readonly name = 'ReplayFailedError';
}

/**
 * Replays a session history against the current workflow code, bundled under `policy`.
 * Two checks, both must pass: the offline fold (durable invariant on every `todo/write`,
 * naming the history event that breaks it) and Temporal's replayer running the real workflow
 * code (determinism and the same invariant inside the workflow).
 *
 * The policy is only baked into the bundle: validators do not run on replay, so the result is
 * the same under either policy — which is exactly the promise this function lets you check.
 *
 * @throws ReplayFailedError naming the broken rule or event.
 */
export async function replaySessionHistory(
  history: History | HistoryJson | string,
  policy: TodoPolicy,
  workflowId = 'replayed-session',
): Promise<ReplayReport> {
  assertTodoPolicy(policy, 'replaySessionHistory()');
  const parsed = typeof history === 'string' || !isProto(history) ? parseHistory(history) : history;
  let report: ReplayReport;
  try {
    const timeline = foldHistory(parsed);
    report = { final: timeline.final, sessionEvents: timeline.steps.length, historyEvents: parsed.events?.length ?? 0 };
  } catch (error) {
    if (error instanceof InvariantViolation) throw new ReplayFailedError(`replay failed: ${error.message}`);
    throw error;
  }
  const bundle = await bundleSessionWorkflows(policy);
  try {
    await Worker.runReplayHistory({ workflowBundle: bundle, replayName: 'agent-sessions-replay' }, parsed, workflowId);
  } catch (error) {
    throw new ReplayFailedError(`replay failed against the current workflow code: ${describeReplayError(error)}`);
  }
  return report;
}

function isProto(history: object): history is History {
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
