import { defaultPayloadConverter } from '@temporalio/common';
import type * as ProtoUtils from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import {
  closeUpdate,
  sessionCloseSignal,
  subagentClosedSignal,
  subagentSpawnUpdate,
  todoWriteUpdate,
  turnEndSignal,
  turnStartSignal,
  type AgentSessionInput,
} from '../../workflows/messages';
import { InvariantViolation } from '../todo/invariant';
import type { TodoCounts } from '../todo/todo-item';
import {
  applySessionEvent,
  assertCarriedState,
  checkSessionInput,
  childSessionId,
  ignoredSignalReason,
  INITIAL_SESSION_STATE,
  runStartState,
  SessionInputRejection,
  type SessionEvent,
  type SessionState,
} from '../session';

/** A workflow history as Temporal's protobuf types hold it. */
export type History = temporal.api.history.v1.IHistory;

/**
 * A history in the JSON form that `temporal workflow show --output json` prints and
 * `Worker.runReplayHistory` reads: `{ "events": [ … ] }`.
 */
export interface HistoryJson {
  events: unknown[];
}

/** One session event found in a history, with where it sits. */
export interface LoggedSessionEvent {
  /** The history event id (1-based, as Temporal numbers them). */
  eventId: number;
  /** When the server recorded it (ISO 8601), if the history says. */
  time: string | undefined;
  event: SessionEvent;
}

/**
 * Reads a history from its JSON text or parsed JSON (as exported by `temporal workflow show
 * --output json` or by this project).
 *
 * @throws Error saying what is wrong when the input is not such a history.
 */
export function parseHistory(json: string | unknown): History {
  const value = fromJsonText(json);
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { events?: unknown }).events)) {
    throw new Error('the history must be a JSON object with an "events" array, as `temporal workflow show --output json` prints');
  }
  try {
    return protoUtils().historyFromJSON(value);
  } catch (error) {
    throw new Error(`the history's events cannot be read: ${(error as Error).message}`);
  }
}

/** The JSON form of a history, the same that `temporal workflow show --output json` prints. */
export function historyToJson(history: History): HistoryJson {
  return JSON.parse(protoUtils().historyToJSON(history)) as HistoryJson;
}

/**
 * The SDK's history JSON converters, loaded when a history is first read or written: they load
 * the protobuf JSON machinery (5 ms), which a client that never handles a history (the CLI's
 * `todos`) must not pay for at start-up.
 */
function protoUtils(): typeof ProtoUtils {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when first needed (above)
  return require('@temporalio/common/lib/proto-utils') as typeof ProtoUtils;
}

/**
 * A session's history over all its runs (it continues as new when a run grows long), oldest
 * first. A session that never continued as new is exported as a plain {@link HistoryJson}
 * instead, exactly what `temporal workflow show --output json` prints.
 */
export interface SessionHistoryJson {
  sessionId: string;
  runs: Array<{ runId: string; events: unknown[] }>;
}

/** Either export format. */
export type ExportedHistory = HistoryJson | SessionHistoryJson;

/** The runs of an export, oldest first, each as a history `Worker.runReplayHistory` reads. */
export function runsOf(exported: ExportedHistory): History[] {
  if ('runs' in exported && Array.isArray(exported.runs)) return exported.runs.map((run) => parseHistory({ events: run.events }));
  return [parseHistory(exported)];
}

/** Reads either export format from JSON text or parsed JSON. */
export function parseExportedHistory(json: string | unknown): ExportedHistory {
  const value = fromJsonText(json);
  const runs = (value as { runs?: unknown } | null)?.runs;
  if (Array.isArray(runs)) {
    runs.forEach((run: unknown, index) => {
      if (!Array.isArray((run as { events?: unknown } | null)?.events)) throw new Error(`runs[${index}] of the history has no "events" array`);
    });
    return value as SessionHistoryJson;
  }
  parseHistory(value);
  return value as HistoryJson;
}

/** The session id a history belongs to, as its start event records it (if the server wrote it). */
export function workflowIdOf(history: History): string | undefined {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes as { workflowId?: string | null } | null | undefined;
  return started?.workflowId ?? undefined;
}

/** The input a run started with, as sent: for a continued run, the state it carried. */
export function runInputOf(history: History): AgentSessionInput {
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  const input = payloads?.[0] !== undefined ? decode(payloads[0], 1, 'its start input') : undefined;
  return typeof input === 'object' && input !== null ? (input as AgentSessionInput) : {};
}

/**
 * The run's input after the checks the workflow makes against Temporal's facts about the run
 * (its parent, the run it continued from): a run whose input the workflow refuses failed at
 * once and served nothing.
 *
 * @throws InvariantViolation naming the run and the refused setting.
 */
function checkedRunInput(history: History, workflowId: string, run: number): AgentSessionInput {
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  try {
    return checkSessionInput(runInputOf(history), {
      workflowId,
      parentWorkflowId: started?.parentWorkflowExecution?.workflowId ?? undefined,
      continuedFromRunId: started?.continuedExecutionRunId || undefined,
    });
  } catch (error) {
    if (error instanceof SessionInputRejection) throw new InvariantViolation(`run ${run}`, error.message);
    throw error;
  }
}

/** The patch id the workflow records the first time a spawn's child id turns out to be taken. */
const REFUSED_SPAWN_LEAVES_NOTHING = 'refused-spawn-leaves-nothing';

/**
 * The session events a history holds, in order: accepted `todo_write` and `close` updates; a
 * subagent once its child really started (a refused spawn leaves nothing); `turn/start`,
 * `turn/end`, `session/close` and `subagent/closed` signals; every other signal as ignored,
 * with the same reason the workflow gives. Rejected updates never reach history, so they cannot
 * appear here.
 */
export function sessionEventsFromHistory(history: History, workflowId = workflowIdOf(history) ?? 'session'): LoggedSessionEvent[] {
  const found: LoggedSessionEvent[] = [];
  /** Accepted spawns waiting for their child to start, by child session id. */
  const spawning = new Map<string, SessionEvent>();
  // Runs of the first release kept a subagent whose child could not start; later runs record
  // the patch marker the first time that happens (see workflows/session.ts).
  const legacySpawns = !(history.events ?? []).some((raw) => markerPatchId(raw) === REFUSED_SPAWN_LEAVES_NOTHING);
  for (const raw of history.events ?? []) {
    const eventId = Number(raw.eventId ?? 0);
    const at = timeOf(raw.eventTime);
    const push = (event: SessionEvent): void => void found.push({ eventId, time: at, event: at !== undefined ? { ...event, at } : event });
    const accepted = raw.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (accepted?.input) {
      const { name, args } = accepted.input;
      const updateId = accepted.meta?.updateId ?? undefined;
      if (name === todoWriteUpdate.name) {
        const input = firstPayload(args?.payloads, eventId) as { todos?: unknown } | undefined;
        push({ type: 'todo/write', todos: input?.todos, label: `todo/write at event ${eventId}`, ...(updateId ? { updateId } : {}) });
      } else if (name === subagentSpawnUpdate.name) {
        const input = firstPayload(args?.payloads, eventId) as { name: string; task?: string };
        const sessionId = childSessionId(workflowId, input.name);
        spawning.set(sessionId, { type: 'subagent/spawn', name: input.name, sessionId, ...(input.task !== undefined ? { task: input.task } : {}) });
      } else if (name === closeUpdate.name) {
        push({ type: 'session/close' });
      }
      continue;
    }
    const started = raw.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId;
    const failed = raw.startChildWorkflowExecutionFailedEventAttributes?.workflowId;
    for (const childId of [started, failed]) {
      const spawn = childId ? spawning.get(childId) : undefined;
      if (childId && spawn) {
        spawning.delete(childId);
        if (childId === started || legacySpawns) push(spawn);
      }
    }
    const signal = raw.workflowExecutionSignaledEventAttributes;
    if (!signal) continue;
    const signalName = signal.signalName ?? '';
    switch (signalName) {
      case turnStartSignal.name:
      case turnEndSignal.name:
        push({ type: signalName as 'turn/start' | 'turn/end' });
        break;
      case sessionCloseSignal.name:
        push({ type: 'session/close' });
        break;
      case subagentClosedSignal.name: {
        const report = firstPayload(signal.input?.payloads, eventId) as { sessionId?: unknown; counts?: unknown; answer?: unknown } | undefined;
        push({ type: 'subagent/closed', sessionId: report?.sessionId as string, counts: report?.counts as TodoCounts, ...(report?.answer !== undefined ? { answer: report.answer } : {}) });
        break;
      }
      default:
        push({ type: 'signal/ignored', name: signalName, reason: ignoredSignalReason(signalName, workflowId) });
    }
  }
  return found;
}

function markerPatchId(raw: temporal.api.history.v1.IHistoryEvent): string | undefined {
  const marker = raw.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_patch') return undefined;
  const payload = marker.details?.['patch-data']?.payloads?.[0];
  const data = payload === undefined ? undefined : (defaultPayloadConverter.fromPayload(payload) as { id?: unknown } | undefined);
  return typeof data?.id === 'string' ? data.id : undefined;
}

/** A session's state after each of its events: the fold, step by step (time travel). */
export interface SessionTimeline {
  steps: Array<LoggedSessionEvent & { state: SessionState; run: number }>;
  final: SessionState;
  /** The state each run started from (carried, or a fork's), by run: `starts[0]` is run 1's. */
  starts: SessionState[];
}

/**
 * Folds a session's history offline — every run, oldest first — with the same pure fold the
 * workflow runs, keeping each intermediate state so any point of the session's past can be
 * shown. A continued run starts from the state it carried, after the same checks the workflow
 * makes, and that state must continue where the previous run ended.
 *
 * @throws InvariantViolation naming the history event whose list breaks the invariant, or the
 *   run whose carried state is broken or does not follow from the run before it.
 */
export function foldHistory(history: History | readonly History[], workflowId?: string): SessionTimeline {
  const runs = Array.isArray(history) ? (history as readonly History[]) : [history as History];
  const steps: SessionTimeline['steps'] = [];
  const starts: SessionState[] = [];
  let state: SessionState = INITIAL_SESSION_STATE;
  runs.forEach((run, index) => {
    const id = workflowId ?? workflowIdOf(run) ?? 'session';
    const input = checkedRunInput(run, id, index + 1);
    const { carried } = input;
    if (carried !== undefined) {
      assertCarriedState(carried);
      if (index > 0 && !continues(state, carried)) {
        throw new InvariantViolation(`run ${index + 1}`, 'the state it carried differs from the state the previous run ended with');
      }
    } else if (index > 0) {
      throw new InvariantViolation(`run ${index + 1}`, 'a continued run must start from carried state');
    }
    // The workflow's own start: carried state, a fork's given state, or nothing.
    state = runStartState(input);
    starts.push(state);
    for (const logged of sessionEventsFromHistory(run, id)) {
      state = applySessionEvent(state, logged.event);
      steps.push({ ...logged, state, run: index + 1 });
    }
  });
  return { steps, final: state, starts };
}

/**
 * The session's state right after history event `eventId` of run `run` (1-based) was applied:
 * the state after the last session event at or before it, or the state the run started from
 * when the run holds none yet. What the timeline shows at that event.
 */
export function stateAtEvent(timeline: SessionTimeline, run: number, eventId: number): SessionState {
  let found: SessionState | undefined;
  for (const step of timeline.steps) {
    if (step.run > run || (step.run === run && step.eventId > eventId)) break;
    if (step.run === run) found = step.state;
  }
  return found ?? timeline.starts[run - 1] ?? INITIAL_SESSION_STATE;
}

function continues(ended: SessionState, carried: SessionState): boolean {
  const essence = (s: SessionState) => JSON.stringify([s.turn, s.turnOpen, s.todos, s.version, s.closed, s.children.map((c) => [c.sessionId, c.closed])]);
  return essence(ended) === essence(carried);
}

/** Parsed JSON as it is, JSON text parsed. */
function fromJsonText(json: string | unknown): unknown {
  if (typeof json !== 'string') return json;
  try {
    return JSON.parse(json) as unknown;
  } catch (error) {
    throw new Error(`the history is not valid JSON: ${(error as Error).message}`);
  }
}

function firstPayload(payloads: temporal.api.common.v1.IPayload[] | null | undefined, eventId: number): unknown {
  const payload = payloads?.[0];
  return payload === undefined ? undefined : decode(payload, eventId, 'its input');
}

function decode(payload: temporal.api.common.v1.IPayload, eventId: number, what: string): unknown {
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch (error) {
    throw new InvariantViolation(`event ${eventId}`, `${what} cannot be decoded: ${(error as Error).message}`);
  }
}

/** When the server recorded an event (ISO 8601), if the history says. */
export function timeOf(time: temporal.api.history.v1.IHistoryEvent['eventTime']): string | undefined {
  if (time === null || time === undefined) return undefined;
  const seconds = Number(time.seconds ?? 0);
  const nanos = Number(time.nanos ?? 0);
  return new Date(seconds * 1000 + Math.floor(nanos / 1e6)).toISOString();
}
