import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import {
  applySessionEvent,
  INITIAL_SESSION_STATE,
  InvariantViolation,
  type SessionEvent,
  type SessionState,
} from '../todo';

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
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (error) {
      throw new Error(`the history is not valid JSON: ${(error as Error).message}`);
    }
  }
  if (typeof value !== 'object' || value === null || !Array.isArray((value as { events?: unknown }).events)) {
    throw new Error('the history must be a JSON object with an "events" array, as `temporal workflow show --output json` prints');
  }
  try {
    return historyFromJSON(value);
  } catch (error) {
    throw new Error(`the history's events cannot be read: ${(error as Error).message}`);
  }
}

/** The JSON form of a history, the same that `temporal workflow show --output json` prints. */
export function historyToJson(history: History): HistoryJson {
  return JSON.parse(historyToJSON(history)) as HistoryJson;
}

/**
 * The session events a history holds, in order: every accepted `todo_write` and `close`
 * update and every `turn/start` / `turn/end` signal. Rejected updates never reach history, so
 * they cannot appear here.
 */
export function sessionEventsFromHistory(history: History): LoggedSessionEvent[] {
  const found: LoggedSessionEvent[] = [];
  for (const raw of history.events ?? []) {
    const eventId = Number(raw.eventId ?? 0);
    const time = timeOf(raw.eventTime);
    const accepted = raw.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (accepted) {
      if (accepted.name === 'todo_write') {
        const args = firstPayload(accepted.args?.payloads, eventId) as { todos?: unknown } | undefined;
        found.push({
          eventId,
          time,
          event: { type: 'todo/write', todos: args?.todos, label: `todo/write at event ${eventId}` },
        });
      } else if (accepted.name === 'close') {
        found.push({ eventId, time, event: { type: 'session/close' } });
      }
      continue;
    }
    const signal = raw.workflowExecutionSignaledEventAttributes?.signalName;
    if (signal === 'turn/start' || signal === 'turn/end') found.push({ eventId, time, event: { type: signal } });
  }
  return found;
}

/** A session's state after each of its events: the fold, step by step (time travel). */
export interface SessionTimeline {
  steps: Array<LoggedSessionEvent & { state: SessionState }>;
  final: SessionState;
}

/**
 * Folds a history offline with the same pure fold the workflow runs, keeping every
 * intermediate state so any point of the session's past can be shown.
 *
 * @throws InvariantViolation naming the history event id whose list breaks the invariant.
 */
export function foldHistory(history: History, from: SessionState = INITIAL_SESSION_STATE): SessionTimeline {
  let state = from;
  const steps: SessionTimeline['steps'] = [];
  for (const logged of sessionEventsFromHistory(history)) {
    state = applySessionEvent(state, logged.event);
    steps.push({ ...logged, state });
  }
  return { steps, final: state };
}

function firstPayload(payloads: temporal.api.common.v1.IPayload[] | null | undefined, eventId: number): unknown {
  const payload = payloads?.[0];
  if (payload === undefined) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch (error) {
    throw new InvariantViolation(`todo/write at event ${eventId}`, `its input cannot be decoded: ${(error as Error).message}`);
  }
}

function timeOf(time: temporal.api.history.v1.IHistoryEvent['eventTime']): string | undefined {
  if (time === null || time === undefined) return undefined;
  const seconds = Number(time.seconds ?? 0);
  const nanos = Number(time.nanos ?? 0);
  return new Date(seconds * 1000 + Math.floor(nanos / 1e6)).toISOString();
}
